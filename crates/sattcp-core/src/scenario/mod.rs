//! Scenarios: the one source of truth for what a run is (DESIGN.md).
//!
//! `load` turns TOML text plus `--set` style overrides into a validated [`Scenario`], or a
//! [`ScenarioError`] that lists every problem found, each with its field path, the rule
//! broken and the value given ("links.bottleneck.rate: must be > 0, got \"-45Mbps\"").

pub mod raw;
pub mod validate;

pub use validate::{AppSpec, LinkSpec, LossSpec, Scenario, SwitchSpec, Topology, TraceSpec};

use std::fmt;

/// One problem in a scenario.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Problem {
    /// Dotted field path ("tcp.mss"), or "" for the document as a whole.
    pub path: String,
    /// The rule broken, in words.
    pub rule: String,
    /// The value given, as written ("" when absent).
    pub got: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "(scenario)" } else { &self.path };
        if self.got.is_empty() {
            write!(f, "{path}: {}", self.rule)
        } else {
            write!(f, "{path}: {}, got {}", self.rule, self.got)
        }
    }
}

/// Every problem found in a scenario. The run cannot start.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(f, "invalid scenario ({n} problem{}):", if n == 1 { "" } else { "s" })?;
        for p in &self.problems {
            writeln!(f, "  {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    pub fn one(path: &str, rule: impl Into<String>, got: impl Into<String>) -> Self {
        ScenarioError { problems: vec![Problem { path: path.into(), rule: rule.into(), got: got.into() }] }
    }
}

/// Parses an override value as people type it on a command line: a TOML literal if it is one
/// (`1e-5`, `true`, `9180`, `["a","b"]`), otherwise the plain string (`sack`, `45Mbps`).
pub fn parse_override_value(s: &str) -> toml::Value {
    let doc = format!("v = {s}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(s.to_string())),
        Err(_) => toml::Value::String(s.to_string()),
    }
}

/// Sets `path` (dotted) to `value` in a TOML tree, creating tables on the way.
pub fn set_path(root: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), Problem> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Problem { path: path.into(), rule: "override path must be dotted keys like tcp.mss".into(), got: format!("{path:?}") });
    }
    let mut table = root;
    for (i, key) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = table.entry(key.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        // `loss.0.segment` style: index into arrays of tables.
        table = match entry {
            toml::Value::Table(t) => t,
            toml::Value::Array(_) => {
                return Err(Problem { path: parts[..=i].join("."), rule: "list entries cannot be overridden from the command line; edit the file".into(), got: String::new() });
            }
            other => {
                return Err(Problem { path: parts[..=i].join("."), rule: "is not a table, cannot set a key inside it".into(), got: other.to_string() });
            }
        };
    }
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

/// Parses TOML text and applies overrides, returning the merged tree.
pub fn merged_tree(text: &str, overrides: &[(String, toml::Value)]) -> Result<toml::Table, ScenarioError> {
    let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let loc = e.span().map(|s| {
            let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}")
        });
        ScenarioError::one("", format!("TOML syntax error{}: {}", loc.map(|l| format!(" at {l}")).unwrap_or_default(), e.message()), "")
    })?;
    let mut problems = Vec::new();
    for (path, value) in overrides {
        if let Err(p) = set_path(&mut root, path, value.clone()) {
            problems.push(p);
        }
    }
    if problems.is_empty() {
        Ok(root)
    } else {
        Err(ScenarioError { problems })
    }
}

/// Deserialises a merged tree into the raw structs. Returns the raw scenario (if the types
/// fit) and the problems found so far: every unknown key, and the first type error.
pub fn raw_from_tree(tree: &toml::Table) -> (Option<raw::RawScenario>, Vec<Problem>) {
    let mut unknown = Vec::new();
    let value = toml::Value::Table(tree.clone());
    let mut on_unknown = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
    let de = serde_ignored::Deserializer::new(value, &mut on_unknown);
    let result: Result<raw::RawScenario, serde_path_to_error::Error<toml::de::Error>> = serde_path_to_error::deserialize(de);
    let mut problems: Vec<Problem> = unknown
        .into_iter()
        .map(|p| Problem { path: p, rule: "unknown key".into(), got: String::new() })
        .collect();
    match result {
        Ok(raw) => (Some(raw), problems),
        Err(e) => {
            let path = e.path().to_string();
            let msg = e.into_inner().to_string();
            let msg = msg.lines().next().unwrap_or("").to_string();
            let rule = if msg.contains("untagged enum Val") { "must be a number or a string with a unit".to_string() } else { msg };
            problems.push(Problem { path: if path == "." { String::new() } else { path }, rule, got: String::new() });
            (None, problems)
        }
    }
}

/// TOML text + overrides + optional seed override -> validated scenario (and the merged tree,
/// which the result carries as the scenario that ran). Every problem is reported at once:
/// unknown keys together with invalid values.
pub fn load(text: &str, overrides: &[(String, toml::Value)], seed: Option<u64>) -> Result<(Scenario, toml::Table), ScenarioError> {
    let tree = merged_tree(text, overrides)?;
    let (raw, mut problems) = raw_from_tree(&tree);
    let Some(raw) = raw else { return Err(ScenarioError { problems }) };
    match validate::validate(&raw, seed) {
        Ok(scenario) if problems.is_empty() => Ok((scenario, tree)),
        Ok(_) => Err(ScenarioError { problems }),
        Err(e) => {
            problems.extend(e.problems);
            Err(ScenarioError { problems })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
        [run]
        duration = "10s"
        [links.access]
        rate = "155.52Mbps"
        delay = "5us"
        [links.bottleneck]
        rate = "45Mbps"
        delay = "275ms"
        [switch]
        buffer = "1bdp"
        [tcp]
        flavor = "reno"
        mss = 9180
        window_scale = 6
    "#;

    #[track_caller]
    fn problems(text: &str, overrides: &[(&str, &str)]) -> Vec<Problem> {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
        match load(text, &ov, None) {
            Ok(_) => panic!("expected a ScenarioError"),
            Err(e) => e.problems,
        }
    }

    #[test]
    fn good_scenario_loads() {
        let (s, _) = load(GOOD, &[], None).unwrap();
        assert_eq!(s.tcp.mss, 9180);
        assert_eq!(s.tcp.rcv_window(), 4_194_240);
    }

    #[test]
    fn every_problem_is_listed_with_its_path() {
        let p = problems(GOOD, &[("links.bottleneck.rate", "45Mbs"), ("tcp.mss", "0"), ("tcp.window_scale", "15"), ("run.duration", "0s"), ("tcp.bogus", "1")]);
        let paths: Vec<&str> = p.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths.len(), 5, "{p:?}");
        for want in ["tcp.bogus", "links.bottleneck.rate", "tcp.mss", "tcp.window_scale", "run.duration"] {
            assert!(paths.contains(&want), "{want} missing from {p:?}");
        }
        let rate = p.iter().find(|p| p.path == "links.bottleneck.rate").unwrap();
        assert!(rate.rule.contains("Mbs") && rate.got == "\"45Mbs\"", "{rate:?}");
    }

    #[test]
    fn negative_rate_and_tiny_buffer() {
        let p = problems(GOOD, &[("links.bottleneck.rate", "-45Mbps")]);
        assert!(p.iter().any(|p| p.path == "links.bottleneck.rate" && p.rule.contains("> 0")), "{p:?}");
        let p = problems(GOOD, &[("switch.buffer", "100B")]);
        assert!(p.iter().any(|p| p.path == "switch.buffer" && p.rule.contains("one packet (9220 bytes")), "{p:?}");
        let p = problems(GOOD, &[("switch.buffer", "0pkt")]);
        assert!(p.iter().any(|p| p.path == "switch.buffer"), "{p:?}");
    }

    #[test]
    fn toml_syntax_error_names_the_line() {
        let p = problems("[run]\nduration = \n", &[]);
        assert!(p[0].rule.contains("TOML syntax error at line 2"), "{p:?}");
    }

    #[test]
    fn override_values_parse_like_toml() {
        assert_eq!(parse_override_value("9180"), toml::Value::Integer(9180));
        assert_eq!(parse_override_value("sack"), toml::Value::String("sack".into()));
        assert_eq!(parse_override_value("1e-5"), toml::Value::Float(1e-5));
        assert_eq!(parse_override_value("\"x\""), toml::Value::String("x".into()));
    }
}
