//! The `sasl.jaas.config` value of the Java clients, parsed.
//!
//! Java reads it with a `StreamTokenizer` (Kafka's `JaasConfig`): a login
//! module class, a control flag, `key=value` options whose values may be
//! double-quoted (with backslash escapes), `//` and `/* */` comments, and a
//! closing `;`. A client config holds exactly one module. librdkafka has no
//! such key, so [`crate::front::translate::security`] turns the parsed options into its own
//! `sasl.*` keys. Errors never quote the text: an unquoted password with a
//! space splits into pieces that look like module names or option keys, so
//! errors name options by their place (`option 2`) instead.

use std::fmt;

/// One parsed login module entry.
#[derive(Debug, Clone, PartialEq)]
pub struct JaasConfig {
    /// The class name as written, e.g. `org.apache.kafka.common.security.scram.ScramLoginModule`.
    pub module: String,
    /// `required`, `requisite`, `sufficient` or `optional`.
    pub flag: String,
    /// Options in file order; a repeated key keeps its last value.
    pub options: Vec<(String, String)>,
}

impl JaasConfig {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The class name without its package.
    pub fn module_name(&self) -> &str {
        self.module.rsplit('.').next().unwrap_or(&self.module)
    }
}

/// Why a `sasl.jaas.config` value could not be read; never contains values
/// (options are named by their place, `option 2`).
#[derive(Debug, Clone, PartialEq)]
pub enum JaasError {
    /// A `/* comment` or a quoted value opened at character `at` (from 1) and never closed.
    Unclosed { what: &'static str, at: usize },
    /// The entry is not `Module flag key=value ...;` (empty, no class, no flag, no `;`).
    Shape(&'static str),
    /// Option `n` (from 1) is not `key=value`; `problem` says how.
    Option { n: usize, problem: &'static str },
    /// More than one login module.
    SeveralModules,
}

/// How to write a value the tokenizer would split.
const QUOTE_HINT: &str = "a value with spaces, ';', '=' or quotes must be written in double quotes: key=\"...\"";

impl fmt::Display for JaasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JaasError::Unclosed { what, at } => write!(f, "a {what} opened at character {at} is never closed"),
            JaasError::Shape(problem) => f.write_str(problem),
            JaasError::Option { n, problem } => write!(f, "option {n} {problem} ({QUOTE_HINT})"),
            JaasError::SeveralModules => f.write_str("it holds more than one login module; a Kafka client's sasl.jaas.config must contain exactly one"),
        }
    }
}

impl std::error::Error for JaasError {}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

fn tokens(text: &str) -> Result<Vec<Token>, JaasError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            let start = i;
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            if i + 1 >= chars.len() {
                return Err(JaasError::Unclosed { what: "/* comment", at: start + 1 });
            }
            i += 2;
        } else if c == '=' {
            out.push(Token::Equals);
            i += 1;
        } else if c == ';' {
            out.push(Token::Semicolon);
            i += 1;
        } else if c == '"' {
            let start = i;
            i += 1;
            let mut s = String::new();
            loop {
                let Some(&c) = chars.get(i) else {
                    return Err(JaasError::Unclosed { what: "quoted value", at: start + 1 });
                };
                i += 1;
                match c {
                    '"' => break,
                    '\\' => {
                        let Some(&e) = chars.get(i) else { continue };
                        i += 1;
                        s.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        });
                    }
                    other => s.push(other),
                }
            }
            out.push(Token::Quoted(s));
        } else {
            let mut s = String::new();
            while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], '=' | ';' | '"') {
                if chars[i] == '/' && matches!(chars.get(i + 1), Some('/' | '*')) {
                    break;
                }
                s.push(chars[i]);
                i += 1;
            }
            out.push(Token::Word(s));
        }
    }
    Ok(out)
}

/// Parses `Module flag key=value ...;` holding exactly one module.
pub fn parse(text: &str) -> Result<JaasConfig, JaasError> {
    let toks = tokens(text)?;
    let mut it = toks.into_iter().peekable();
    let module = match it.next() {
        Some(Token::Word(w)) => w,
        None => return Err(JaasError::Shape("it is empty; expected 'LoginModuleClass required key=\"value\" ...;'")),
        Some(_) => return Err(JaasError::Shape("it must start with a login module class name")),
    };
    let flag = match it.next() {
        Some(Token::Word(w)) if ["required", "requisite", "sufficient", "optional"].contains(&w.to_ascii_lowercase().as_str()) => w.to_ascii_lowercase(),
        _ => return Err(JaasError::Shape("the login module class name must be followed by a control flag (required, requisite, sufficient or optional)")),
    };
    let mut options: Vec<(String, String)> = Vec::new();
    for n in 1.. {
        match it.next() {
            Some(Token::Semicolon) => break,
            Some(Token::Word(key)) => {
                if it.next() != Some(Token::Equals) {
                    return Err(JaasError::Option { n, problem: "must be key=value, but its name is not followed by '='" });
                }
                let value = match it.next() {
                    Some(Token::Word(v) | Token::Quoted(v)) => v,
                    _ => return Err(JaasError::Option { n, problem: "has no value after '='" }),
                };
                options.retain(|(k, _)| *k != key);
                options.push((key, value));
            }
            None => return Err(JaasError::Shape("the options must end with ';'")),
            Some(_) => return Err(JaasError::Option { n, problem: "starts with '=' or quoted text; expected key=value" }),
        }
    }
    if it.peek().is_some() {
        return Err(JaasError::SeveralModules);
    }
    Ok(JaasConfig { module, flag, options })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scram_with_quoted_values() {
        let j = parse(r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="p;a=s\"s";"#).unwrap();
        assert_eq!(j.module_name(), "ScramLoginModule");
        assert_eq!(j.flag, "required");
        assert_eq!(j.get("username"), Some("alice"));
        assert_eq!(j.get("password"), Some("p;a=s\"s"));
    }

    #[test]
    fn unquoted_values_comments_and_whitespace() {
        let j =
            parse("  org.apache.kafka.common.security.plain.PlainLoginModule  REQUIRED // a comment\n /* block\n */ username=bob\n\tpassword = \"x y\" ;  ")
                .unwrap();
        assert_eq!(j.module_name(), "PlainLoginModule");
        assert_eq!(j.flag, "required");
        assert_eq!(j.options, vec![("username".into(), "bob".into()), ("password".into(), "x y".into())]);
    }

    #[test]
    fn no_options_and_repeated_keys() {
        assert!(parse("a.B optional;").unwrap().options.is_empty());
        assert_eq!(parse("a.B required k=1 k=2;").unwrap().get("k"), Some("2"));
    }

    #[test]
    fn errors_never_show_values() {
        for (text, needle) in [
            ("", "empty"),
            ("M required password=\"hunter2\"", "must end with ';'"),
            ("M password=\"hunter2\";", "control flag"),
            ("M required password \"hunter2\";", "followed by '='"),
            ("M required password=;", "no value"),
            ("M required password=\"hunter2;", "never closed"),
            ("M required password=\"hunter2\"; N required;", "exactly one"),
            ("M required /* hunter2", "never closed"),
            ("= required;", "class name"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.to_string().contains(needle), "{text}: {e}");
            assert!(!e.to_string().contains("hunter2"), "{text}: {e}");
        }
    }

    /// A password with a space or `;` written without quotes splits into
    /// tokens; the parse then fails on a later piece of it, which must not
    /// be quoted either. So must a value mistaken for the module name.
    #[test]
    fn errors_never_show_a_fragment_of_an_unquoted_value() {
        for text in [
            "M required password=CANARY-a CANARY-b;",
            "M required password=CANARY-a CANARY-b",
            "M required password=CANARY-a;CANARY-b;",
            "M required password=CANARY-a CANARY-b CANARY-c=;",
            "M required password=CANARY-a =CANARY-b;",
            "M required password=CANARY-a \"CANARY-b\";",
            "M required password=CANARY-a CANARY-b\\\"x;",
            "CANARY-a",
            "CANARY-a CANARY-b;",
            "CANARY-a required password=\"x",
            "M CANARY-a password=x;",
            "M required password=\"CANARY-a\\\" CANARY-b;",
            "M required password=\"CANARY-a\\\\\" CANARY-b;",
            "M required password=CANARY-a/*CANARY-b",
            "M required password=CANARY-a//CANARY-b",
        ] {
            let e = parse(text).unwrap_err();
            assert!(!e.to_string().contains("CANARY"), "{text}: {e}");
        }
    }
}
