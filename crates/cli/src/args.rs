//! Strict argument parsing with the behaviour of Node's `util.parseArgs`
//! (`strict: true`, positionals allowed): flags anywhere, `--name=value` or
//! `--name value`, `--` ends options, short flags only where declared, the last
//! repeat wins. Errors are the first sentence of Node's message.

use std::collections::BTreeMap;

/// Whether an option is a switch or takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// A switch: `--json`.
    Bool,
    /// Takes a value: `--root <dir>`.
    Str,
}

/// One declared option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptSpec {
    /// The long name, without `--`.
    pub name: &'static str,
    /// The one-letter alias, if any.
    pub short: Option<char>,
    /// Switch or value.
    pub kind: OptKind,
    /// The placeholder shown in help (`<dir>`), for value options.
    pub placeholder: &'static str,
    /// One line for the help table.
    pub description: &'static str,
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptValue {
    /// A switch that was given.
    Flag,
    /// A value option's value (the last one given).
    Text(String),
}

/// The result of [`parse`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Options by long name; the last occurrence wins.
    pub values: BTreeMap<String, OptValue>,
    /// Positionals in order.
    pub positionals: Vec<String>,
}

impl Parsed {
    /// Whether a switch was given.
    pub fn flag(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }
    /// The value of a value option, if given (possibly empty).
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.values.get(name) {
            Some(OptValue::Text(s)) => Some(s),
            _ => None,
        }
    }
    /// The value of a value option, treating an empty value as absent.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.text(name).filter(|s| !s.is_empty())
    }
}

struct Token {
    name: String,
    raw_name: String,
    value: Option<String>,
    inline: bool,
}

/// Parses `args` against `options`. The error is the message after `Error: `.
pub fn parse(args: &[String], options: &[OptSpec]) -> Result<Parsed, String> {
    let find = |name: &str| options.iter().find(|o| o.name == name);
    let long_for_short = |c: char| {
        options
            .iter()
            .find(|o| o.short == Some(c))
            .map_or_else(|| c.to_string(), |o| o.name.to_string())
    };
    let is_str = |name: &str| find(name).is_some_and(|o| o.kind == OptKind::Str);

    let mut remaining: Vec<String> = args.iter().rev().cloned().collect();
    let mut tokens: Vec<Result<Token, String>> = Vec::new();
    while let Some(arg) = remaining.pop() {
        let chars: Vec<char> = arg.chars().collect();
        if arg == "--" {
            while let Some(rest) = remaining.pop() {
                tokens.push(Err(rest));
            }
            break;
        }
        if chars.len() == 2 && chars[0] == '-' && chars[1] != '-' {
            let name = long_for_short(chars[1]);
            let value = if is_str(&name) { remaining.pop() } else { None };
            tokens.push(Ok(Token {
                name,
                raw_name: arg.clone(),
                value,
                inline: false,
            }));
        } else if chars.len() > 2 && chars[0] == '-' && chars[1] != '-' {
            let first = long_for_short(chars[1]);
            if is_str(&first) {
                let value: String = chars[2..].iter().collect();
                let raw_name = format!("-{}", chars[1]);
                tokens.push(Ok(Token {
                    name: first,
                    raw_name,
                    value: Some(value),
                    inline: true,
                }));
            } else {
                let mut expanded = Vec::new();
                for (i, c) in chars.iter().enumerate().skip(1) {
                    if !is_str(&long_for_short(*c)) || i == chars.len() - 1 {
                        expanded.push(format!("-{c}"));
                    } else {
                        expanded.push(format!("-{}", chars[i..].iter().collect::<String>()));
                        break;
                    }
                }
                remaining.extend(expanded.into_iter().rev());
            }
        } else if chars.len() > 2 && arg.starts_with("--") {
            if let Some((name, value)) = arg[2..].split_once('=') {
                let raw_name = format!("--{name}");
                tokens.push(Ok(Token {
                    name: name.to_string(),
                    raw_name,
                    value: Some(value.to_string()),
                    inline: true,
                }));
            } else {
                let name = arg[2..].to_string();
                let value = if is_str(&name) { remaining.pop() } else { None };
                tokens.push(Ok(Token {
                    name,
                    raw_name: arg.clone(),
                    value,
                    inline: false,
                }));
            }
        } else {
            tokens.push(Err(arg));
        }
    }

    let mut parsed = Parsed::default();
    for token in tokens {
        let token = match token {
            Ok(t) => t,
            Err(positional) => {
                parsed.positionals.push(positional);
                continue;
            }
        };
        let Some(spec) = find(&token.name) else {
            return Err(format!("Unknown option '{}'", token.raw_name));
        };
        let short_and_long = match spec.short {
            Some(c) => format!("-{c}, --{}", spec.name),
            None => format!("--{}", spec.name),
        };
        match (spec.kind, token.value) {
            (OptKind::Str, None) => {
                return Err(format!(
                    "Option '{short_and_long} <value>' argument missing"
                ));
            }
            (OptKind::Bool, Some(_)) => {
                return Err(format!(
                    "Option '{short_and_long}' does not take an argument"
                ));
            }
            (OptKind::Str, Some(v)) => {
                if !token.inline && v.chars().count() > 1 && v.starts_with('-') {
                    return Err(format!("Option '{}' argument is ambiguous", token.raw_name));
                }
                parsed
                    .values
                    .insert(spec.name.to_string(), OptValue::Text(v));
            }
            (OptKind::Bool, None) => {
                parsed.values.insert(spec.name.to_string(), OptValue::Flag);
            }
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTS: &[OptSpec] = &[
        OptSpec {
            name: "json",
            short: None,
            kind: OptKind::Bool,
            placeholder: "",
            description: "",
        },
        OptSpec {
            name: "trigger",
            short: None,
            kind: OptKind::Str,
            placeholder: "<id>",
            description: "",
        },
        OptSpec {
            name: "help",
            short: Some('h'),
            kind: OptKind::Bool,
            placeholder: "",
            description: "",
        },
    ];

    fn p(args: &[&str]) -> Result<Parsed, String> {
        let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
        parse(&args, OPTS)
    }

    #[test]
    fn flags_go_anywhere_and_the_last_repeat_wins() {
        let r = p(&["a", "--trigger", "x", "b", "--json", "--trigger=y"]).expect("parses");
        assert_eq!(r.positionals, vec!["a", "b"]);
        assert_eq!(r.text("trigger"), Some("y"));
        assert!(r.flag("json"));
    }

    #[test]
    fn double_dash_ends_options() {
        let r = p(&["--json", "--", "--trigger", "-h"]).expect("parses");
        assert_eq!(r.positionals, vec!["--trigger", "-h"]);
    }

    #[test]
    fn short_h_is_help_and_lone_dash_is_positional() {
        let r = p(&["-h", "-"]).expect("parses");
        assert!(r.flag("help"));
        assert_eq!(r.positionals, vec!["-"]);
    }

    #[test]
    fn errors_are_node_first_sentences() {
        assert_eq!(
            p(&["--bogus"]).err().as_deref(),
            Some("Unknown option '--bogus'")
        );
        assert_eq!(
            p(&["--bogus=1"]).err().as_deref(),
            Some("Unknown option '--bogus'")
        );
        assert_eq!(p(&["-x"]).err().as_deref(), Some("Unknown option '-x'"));
        assert_eq!(p(&["-hx"]).err().as_deref(), Some("Unknown option '-x'"));
        assert_eq!(
            p(&["--trigger"]).err().as_deref(),
            Some("Option '--trigger <value>' argument missing")
        );
        assert_eq!(
            p(&["--json=1"]).err().as_deref(),
            Some("Option '--json' does not take an argument")
        );
        assert_eq!(
            p(&["--help=no"]).err().as_deref(),
            Some("Option '-h, --help' does not take an argument")
        );
        assert_eq!(
            p(&["--trigger", "-x"]).err().as_deref(),
            Some("Option '--trigger' argument is ambiguous")
        );
    }

    #[test]
    fn unknown_flags_fail_even_with_help() {
        assert!(p(&["--help", "--bogus"]).is_err());
    }

    #[test]
    fn values_may_start_with_a_dash_inline_and_be_empty() {
        let r = p(&["--trigger=-x"]).expect("parses");
        assert_eq!(r.text("trigger"), Some("-x"));
        let r = p(&["--trigger", ""]).expect("parses");
        assert_eq!(r.text("trigger"), Some(""));
        assert_eq!(r.non_empty("trigger"), None);
        let r = p(&["--trigger", "-"]).expect("a lone dash is a value");
        assert_eq!(r.text("trigger"), Some("-"));
    }
}
