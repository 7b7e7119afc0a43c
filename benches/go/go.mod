module pipes-bench-go

go 1.22
