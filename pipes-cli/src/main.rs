//! `pipes-proto`: the protocol compiler on the command line. Checks, expands, draws and explains
//! `*.pipes` files without compiling a crate; every subcommand is a thin layer over proto-dsl,
//! so the text here is what the macro, build.rs generation and docs say too.
//!
//! Arguments are parsed by hand: four subcommands and three options do not need a parser
//! crate, and the tool stays free of dependencies beyond proto-dsl.

use std::ffi::{OsStr, OsString};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "\
pipes-proto: check, expand, draw and explain pipes protocols (*.pipes files)

Usage:
  pipes-proto check FILE                            report errors rustc-style; exit 1 if any
  pipes-proto expand [--runtime PATH] [--diagram] FILE
                                                    print the generated Rust, formatted
  pipes-proto graph [--format dot|mermaid|svg] FILE draw the states and messages (default: dot)
  pipes-proto explain FILE                          tabulate states, senders, messages, liveness

Options:
  --runtime PATH   the path generated code reaches the runtime by (default: ::pipes)
  --diagram        add a state diagram (SVG) to each generated module's docs
  --format FORMAT  dot (Graphviz), mermaid, or svg (the picture module docs show)
  -h, --help       print this help
  -V, --version    print the version

FILE may be `-` for standard input; after `--`, it is a file whatever its name (`-- -x`).
Exit status: 0 on success, 1 when the protocol has errors or a file cannot be read, 2 on a
usage error.
";

/// What to do with the file.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Check,
    Expand { runtime: String, diagram: bool },
    Graph { format: Format },
    Explain,
}

/// A `graph` output format.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Format {
    Dot,
    Mermaid,
    Svg,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Help,
    Version,
    Run { command: Command, file: OsString },
}

/// Parses the arguments after the program name; the error is a one-line usage message.
fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Request, String> {
    let mut args = args.into_iter();
    let mut subcommand = None;
    let mut file = None;
    let mut runtime = None;
    let mut format = None;
    let mut diagram = false;
    // After `--`, every argument is the subcommand or FILE, even one that starts with `-`.
    let mut options = true;
    while let Some(raw) = args.next() {
        if !options || raw == "--" {
            if raw == "--" && options {
                options = false;
            } else if subcommand.is_none() {
                subcommand =
                    Some(raw.into_string().map_err(|raw| {
                        format!("unknown subcommand `{}`", raw.to_string_lossy())
                    })?);
            } else if file.is_none() {
                file = Some(raw);
            } else {
                return Err(format!(
                    "unexpected argument `{}`: one FILE at a time",
                    raw.to_string_lossy()
                ));
            }
            continue;
        }
        let Some(arg) = raw.to_str().map(str::to_string) else {
            // Only a file name may be other than UTF-8 (a Unix path is bytes).
            if subcommand.is_some() && file.is_none() {
                file = Some(raw);
                continue;
            }
            return Err(format!("argument `{}` is not UTF-8", raw.to_string_lossy()));
        };
        // `--name=value` and `--name value` both work, as in most tools.
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value)),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| match inline {
            Some(value) => Ok(value.to_string()),
            None => args
                .next()
                .ok_or(format!("`{name}` needs a value"))?
                .into_string()
                .map_err(|_| format!("`{name}` needs a UTF-8 value")),
        };
        match name.as_str() {
            "-h" | "--help" | "help" if subcommand.is_none() || name != "help" => {
                return Ok(Request::Help);
            }
            "-V" | "--version" => return Ok(Request::Version),
            "--runtime" => runtime = Some(value("--runtime")?),
            "--format" => format = Some(value("--format")?),
            "--diagram" => diagram = true,
            "-" if file.is_none() => file = Some(raw),
            "-" => return Err("unexpected argument `-`: one FILE at a time".to_string()),
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            _ if subcommand.is_none() => subcommand = Some(arg),
            _ if file.is_none() => file = Some(raw),
            _ => return Err(format!("unexpected argument `{arg}`: one FILE at a time")),
        }
    }
    let Some(subcommand) = subcommand else {
        return Err("no subcommand: use check, expand, graph or explain".to_string());
    };
    let only = |allowed: &[&str]| -> Result<(), String> {
        let given = [
            ("--runtime", runtime.is_some()),
            ("--format", format.is_some()),
            ("--diagram", diagram),
        ];
        match given.iter().find(|(n, on)| *on && !allowed.contains(n)) {
            Some((n, _)) => Err(format!("`{n}` does not apply to `{subcommand}`")),
            None => Ok(()),
        }
    };
    let command = match subcommand.as_str() {
        "check" => only(&[]).map(|()| Command::Check)?,
        "explain" => only(&[]).map(|()| Command::Explain)?,
        "expand" => {
            only(&["--runtime", "--diagram"])?;
            Command::Expand {
                runtime: runtime.unwrap_or_else(|| "::pipes".to_string()),
                diagram,
            }
        }
        "graph" => {
            only(&["--format"])?;
            let format = match format.as_deref() {
                None | Some("dot") => Format::Dot,
                Some("mermaid") => Format::Mermaid,
                Some("svg") => Format::Svg,
                Some(other) => {
                    return Err(format!(
                        "unknown format `{other}`: use `dot`, `mermaid` or `svg`"
                    ));
                }
            };
            Command::Graph { format }
        }
        other => {
            return Err(format!(
                "unknown subcommand `{other}`: use check, expand, graph or explain"
            ));
        }
    };
    let file = file.ok_or(format!("`{subcommand}` needs a FILE"))?;
    Ok(Request::Run { command, file })
}

/// Why a run failed: the text for stderr, and the exit status.
struct Failure {
    text: String,
    status: u8,
}

impl Failure {
    /// The protocol has errors, or a file could not be read.
    fn errors(text: impl Into<String>) -> Failure {
        Failure {
            text: text.into(),
            status: 1,
        }
    }
}

/// Runs a command on a file's text: the text for stdout, or the failure.
fn run(command: &Command, name: &str, source: &str) -> Result<String, Failure> {
    if let Command::Expand { runtime, diagram } = command {
        return proto_dsl::Config::new()
            .runtime(runtime.as_str())
            .diagrams(*diagram)
            .expand(name, source)
            .map_err(|error| match error {
                // A bad `--runtime` is a usage error, as every other bad option is.
                proto_dsl::Error::Runtime(_) => Failure {
                    text: format!("error: {error}\n\n{USAGE}"),
                    status: 2,
                },
                error => Failure::errors(format!("{error}\n")),
            });
    }
    let analysis = proto_dsl::analyze(source)
        .map_err(|diagnostics| Failure::errors(diagnostics.render(name, source)))?;
    let sections: Vec<String> = match command {
        Command::Check => {
            let summaries: Vec<String> = analysis
                .protocols()
                .map(|(protocol, liveness)| {
                    let messages: usize = protocol.states.iter().map(|s| s.messages.len()).sum();
                    format!(
                        "{} ({}, {}, {})",
                        protocol.name.unraw(),
                        count(protocol.states.len(), "state"),
                        count(messages, "message"),
                        if liveness.is_bounded() {
                            "bounded"
                        } else {
                            "unbounded"
                        }
                    )
                })
                .collect();
            vec![format!(
                "{name}: ok, {}: {}\n",
                count(summaries.len(), "protocol"),
                summaries.join(", ")
            )]
        }
        Command::Graph { format } => analysis
            .file
            .protocols
            .iter()
            .map(|protocol| match format {
                Format::Dot => proto_dsl::diagram::dot(protocol),
                Format::Mermaid => proto_dsl::diagram::mermaid(protocol),
                Format::Svg => proto_dsl::diagram::svg(protocol) + "\n",
            })
            .collect(),
        Command::Explain => analysis
            .protocols()
            .map(|(protocol, liveness)| proto_dsl::diagram::explain(protocol, liveness))
            .collect(),
        Command::Expand { .. } => unreachable!("handled above"),
    };
    // Blank lines between the protocols of a file with several.
    Ok(sections.join("\n"))
}

/// `1 state`, `2 states`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Reads FILE, or standard input for `-`: its display name and text.
fn read(file: &OsStr) -> Result<(String, String), Failure> {
    if file == "-" {
        let mut source = String::new();
        std::io::stdin()
            .read_to_string(&mut source)
            .map_err(|e| Failure::errors(format!("error: cannot read standard input: {e}\n")))?;
        return Ok(("<stdin>".to_string(), source));
    }
    let name = Path::new(file).display().to_string();
    std::fs::read_to_string(file)
        .map(|source| (name.clone(), source))
        .map_err(|e| Failure::errors(format!("error: cannot read `{name}`: {e}\n")))
}

fn main() -> ExitCode {
    let outcome = match parse_args(std::env::args_os().skip(1)) {
        Ok(Request::Help) => Ok(USAGE.to_string()),
        Ok(Request::Version) => Ok(format!("pipes-proto {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(Request::Run { command, file }) => {
            read(&file).and_then(|(name, source)| run(&command, &name, &source))
        }
        Err(usage) => Err(Failure {
            text: format!("error: {usage}\n\n{USAGE}"),
            status: 2,
        }),
    };
    match outcome {
        Ok(text) => {
            // A closed pipe (`pipes-proto expand f | head`) is not worth a panic.
            let _ = std::io::stdout().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(failure) => {
            let _ = std::io::stderr().write_all(failure.text.as_bytes());
            ExitCode::from(failure.status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Request, String> {
        parse_args(args.iter().map(OsString::from))
    }

    #[test]
    fn options_go_before_or_after_the_file_with_or_without_equals() {
        let expected = Request::Run {
            command: Command::Expand {
                runtime: "crate::rt".to_string(),
                diagram: true,
            },
            file: "a.pipes".into(),
        };
        assert_eq!(
            parse(&["expand", "--runtime", "crate::rt", "a.pipes", "--diagram"]),
            Ok(expected)
        );
        assert_eq!(
            parse(&["graph", "a.pipes", "--format=mermaid"]),
            Ok(Request::Run {
                command: Command::Graph {
                    format: Format::Mermaid
                },
                file: "a.pipes".into()
            })
        );
        assert_eq!(
            parse(&["check", "-"]),
            Ok(Request::Run {
                command: Command::Check,
                file: "-".into()
            })
        );
    }

    #[test]
    fn help_version_and_usage_errors() {
        assert_eq!(parse(&["--help"]), Ok(Request::Help));
        assert_eq!(parse(&["help"]), Ok(Request::Help));
        assert_eq!(parse(&["check", "-h"]), Ok(Request::Help));
        assert_eq!(parse(&["-V"]), Ok(Request::Version));
        assert_eq!(
            parse(&[]),
            Err("no subcommand: use check, expand, graph or explain".to_string())
        );
        assert_eq!(parse(&["check"]), Err("`check` needs a FILE".to_string()));
        assert_eq!(
            parse(&["check", "a", "b"]),
            Err("unexpected argument `b`: one FILE at a time".to_string())
        );
        assert_eq!(
            parse(&["check", "-", "-"]),
            Err("unexpected argument `-`: one FILE at a time".to_string())
        );
        // After `--`, a name that starts with `-` is the file.
        assert_eq!(
            parse(&["check", "--", "-x"]),
            Ok(Request::Run {
                command: Command::Check,
                file: "-x".into()
            })
        );
        assert_eq!(
            parse(&["--", "check", "--help"]),
            Ok(Request::Run {
                command: Command::Check,
                file: "--help".into()
            })
        );
        assert_eq!(
            parse(&["check", "--", "a", "b"]),
            Err("unexpected argument `b`: one FILE at a time".to_string())
        );
        assert_eq!(
            parse(&["check", "--format", "dot", "a"]),
            Err("`--format` does not apply to `check`".to_string())
        );
        assert_eq!(
            parse(&["graph", "--format", "png", "a"]),
            Err("unknown format `png`: use `dot`, `mermaid` or `svg`".to_string())
        );
        assert_eq!(
            parse(&["expand", "--runtime"]),
            Err("`--runtime` needs a value".to_string())
        );
        assert_eq!(
            parse(&["draw", "a"]),
            Err("unknown subcommand `draw`: use check, expand, graph or explain".to_string())
        );
    }
}
