//! Runs one cash machine session over the build.rs-generated protocol and prints what the
//! client saw.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let statement = pipes_build_example::session(&[100, 50], &[30, 500])?;
    println!("{statement:?}");
    Ok(())
}
