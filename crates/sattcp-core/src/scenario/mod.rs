//! Scenarios: the one source of truth for what a run is (DESIGN.md).
//!
//! `load` turns TOML text plus `--set` style overrides into a validated [`Scenario`], or a
//! [`ScenarioError`] that lists every problem found, each with its field path, the rule
//! broken and the value given ("links.bottleneck.rate: must be > 0, got \"-45Mbps\"").

pub mod raw;
pub mod resolve;
pub mod schema;
pub mod validate;

pub use validate::{AppSpec, LinkSpec, LossSpec, PingPongSpec, Scenario, SwitchSpec, Topology, TraceSpec};

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

/// Sets `path` (dotted) to `value` in a TOML tree, creating tables on the way. A table value
/// merges into the table already at `path`, key by key and recursively (`tcp={mss=1000}`
/// sets tcp.mss and keeps the other keys of `[tcp]`, as `tcp.mss=1000` does); any other
/// value, or a table where there is none or a value that is not a table, replaces it.
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
    merge_into(table, parts[parts.len() - 1], value);
    Ok(())
}

/// `table[key] = value`, a table merging into a table (see [`set_path`]).
fn merge_into(table: &mut toml::Table, key: &str, value: toml::Value) {
    match (table.get_mut(key), value) {
        (Some(toml::Value::Table(old)), toml::Value::Table(new)) => {
            for (k, v) in new {
                merge_into(old, &k, v);
            }
        }
        (_, value) => {
            table.insert(key.to_string(), value);
        }
    }
}

/// Parses TOML text and applies overrides, returning the merged tree.
pub fn merged_tree(text: &str, overrides: &[(String, toml::Value)]) -> Result<toml::Table, ScenarioError> {
    let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let loc = e.span().map(|s| {
            let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}")
        });
        // toml's message for an integer beyond i64 says neither the limit nor that it is TOML's.
        let why = if e.message().contains("number too large") { format!(" (beyond {TOML_INTEGERS})") } else { String::new() };
        ScenarioError::one("", format!("TOML syntax error{}: {}{why}", loc.map(|l| format!(" at {l}")).unwrap_or_default(), e.message()), "")
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

/// The top-level keys of a scenario: the fields of [`raw::RawScenario`], each read on its own
/// so that a type error in one hides nothing in the others.
pub const SECTIONS: [&str; 12] = ["name", "description", "run", "topology", "links", "switch", "tcp", "app", "loss", "trace", "gateway", "constellation"];

/// What reading a merged tree into the raw structs found.
#[derive(Debug, Default)]
pub struct Read {
    /// The scenario as far as it could be read: values of the wrong type are left at their
    /// defaults (and listed in `unread`).
    pub raw: raw::RawScenario,
    /// Every unknown key, then every type error.
    pub problems: Vec<Problem>,
    /// Dotted paths of the values that could not be read, for [`validate::validate_read`].
    pub unread: Vec<String>,
}

/// Most attempts at reading one section before giving it up whole (each attempt removes one
/// value of the wrong type).
const MAX_READS_PER_SECTION: usize = 256;

/// Deserialises a merged tree into the raw structs, section by section. A value of the wrong
/// type is reported, removed (an element of a list is replaced by an empty table, so that the
/// next elements keep their indices) and the section read again, so every type error and every
/// unknown key is found in one pass. Paths are dotted throughout ("loss.0.flow").
pub fn raw_from_tree(tree: &toml::Table) -> Read {
    let mut r = Reader::default();
    for key in tree.keys().filter(|k| !SECTIONS.contains(&k.as_str())) {
        r.unknown.push(key.clone());
    }
    let raw = raw::RawScenario {
        name: r.section(tree, "name"),
        description: r.section(tree, "description"),
        run: r.section(tree, "run"),
        topology: r.section(tree, "topology"),
        links: r.section(tree, "links"),
        switch: r.section(tree, "switch"),
        tcp: r.section(tree, "tcp"),
        app: r.section(tree, "app"),
        loss: r.section(tree, "loss"),
        trace: r.section(tree, "trace"),
        constellation: r.section(tree, "constellation"),
        gateway: r.section(tree, "gateway"),
    };
    let mut problems: Vec<Problem> = r.unknown.into_iter().map(|p| Problem { rule: schema::unknown_key_rule(&p), path: p, got: String::new() }).collect();
    problems.extend(r.type_errors);
    Read { raw, problems, unread: r.unread }
}

#[derive(Default)]
struct Reader {
    unknown: Vec<String>,
    type_errors: Vec<Problem>,
    unread: Vec<String>,
}

/// One step of a path inside a section: a table key or a list index.
#[derive(Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn dotted(section: &str, steps: &[Step]) -> String {
    let mut path = section.to_string();
    for s in steps {
        match s {
            Step::Key(k) => path += &format!(".{k}"),
            Step::Index(i) => path += &format!(".{i}"),
        }
    }
    path
}

fn value_at<'a>(mut v: &'a mut toml::Value, steps: &[Step]) -> Option<&'a mut toml::Value> {
    for s in steps {
        v = match (s, v) {
            (Step::Key(k), toml::Value::Table(t)) => t.get_mut(k)?,
            (Step::Index(i), toml::Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A serde message ("invalid type: string \"6\", expected i64") as a rule without the value.
fn type_rule(msg: &str) -> String {
    if msg.contains("untagged enum Val") {
        return "must be a number or a string with a unit".into();
    }
    let Some((_, expected)) = msg.rsplit_once(", expected ") else { return msg.to_string() };
    let what = match expected {
        "i64" | "i32" | "u64" | "u32" | "u16" | "u8" => "an integer",
        "f64" | "f32" => "a number",
        "a boolean" => "true or false",
        "a sequence" => "a list",
        e if e.starts_with("struct ") => "a table",
        e => e,
    };
    format!("must be {what}")
}

/// TOML's integers are i64 (TOML 1.0, "Integer"): a longer one is no TOML value, so an override
/// (`--set run.seed=18446744073709551615`) falls back to the string of its digits, and a file
/// that writes one has a syntax error.
const TOML_INTEGERS: &str = "TOML's integers (-2^63 to 2^63 - 1)";

/// Whether `s` is an integer literal that TOML's integers cannot hold (sign, digits and
/// underscores between digits, beyond i64).
fn beyond_toml_integers(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let well_formed = !digits.is_empty() && digits.split('_').all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    // Well formed, it can fail only by overflowing.
    well_formed && s.replace('_', "").parse::<i64>().is_err()
}

/// The rule of a number key given an integer [`beyond_toml_integers`]: serde's "must be an
/// integer" would deny what the user wrote; the key's allowed values come from the schema.
/// Public for the Python API's dict scenarios (`sattcp._core.beyond_toml_integers_rule`).
pub fn beyond_toml_integers_rule(path: &str) -> String {
    match schema::row(path).map(|k| k.allowed).filter(|a| !a.is_empty()) {
        Some(allowed) => format!("is beyond {TOML_INTEGERS}; allowed: {allowed}"),
        None => format!("is beyond {TOML_INTEGERS}"),
    }
}

/// Why `s` is no TOML value, if it is none (toml's message on one line, with the limit of its
/// integers when it is one too long, and the value with its bare words quoted when that is
/// one: `[bottleneck]` for `["bottleneck"]`, what a shell leaves of an unquoted `--set`).
fn toml_literal_error(s: &str) -> Option<String> {
    let parses = |v: &str| format!("v = {v}").parse::<toml::Table>();
    let e = parses(s).err()?;
    // toml's message has a line per part ("invalid array\nexpected `]`"): one line, so that
    // each problem stays one line of the CLI's list.
    let message = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(": ");
    let why = if message.contains("number too large") { format!(", beyond {TOML_INTEGERS}") } else { String::new() };
    let quoted = quote_bare_words(s);
    let hint = if quoted != s && parses(&quoted).is_ok() { format!("; strings in it are quoted: {}", cut(quoted)) } else { String::new() };
    Some(format!("{message}{why}{hint}"))
}

/// `s` with every bare word that is neither a key (followed by `=`), nor a boolean, nor a
/// number put in double quotes: `[bottleneck, 45Mbps]` -> `["bottleneck", "45Mbps"]`. Quoted
/// strings are copied as they are.
fn quote_bare_words(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            // A quoted string, to its closing quote (a basic string's \" does not close it).
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == '\\' && c == '"' && i + 1 < chars.len() {
                    out.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if chars[i - 1] == c {
                    break;
                }
            }
            continue;
        }
        let word = |ch: char| ch.is_ascii_alphanumeric() || "_-+./".contains(ch);
        if !word(c) {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && word(chars[i]) {
            i += 1;
        }
        let w: String = chars[start..i].iter().collect();
        let is_key = chars[i..].iter().find(|ch| !ch.is_whitespace()) == Some(&'=');
        let literal = !w.chars().any(|ch| ch.is_ascii_alphabetic())
            || matches!(w.as_str(), "true" | "false" | "inf" | "+inf" | "-inf" | "nan" | "+nan" | "-nan")
            || w.parse::<f64>().is_ok();
        if is_key || literal {
            out.push_str(&w);
        } else {
            out.push('"');
            out.push_str(&w);
            out.push('"');
        }
    }
    out
}

/// A value as written, for `got` (long tables and lists are cut short).
fn shown(v: &toml::Value) -> String {
    cut(v.to_string())
}

/// `s` cut short after 60 characters.
fn cut(s: String) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

impl Reader {
    fn section<T: serde::de::DeserializeOwned + Default>(&mut self, tree: &toml::Table, key: &str) -> T {
        let Some(value) = tree.get(key) else { return T::default() };
        let mut value = value.clone();
        let mut replaced: Vec<Vec<Step>> = Vec::new();
        for _ in 0..MAX_READS_PER_SECTION {
            let mut unknown = Vec::new();
            let result: Result<T, serde_path_to_error::Error<toml::de::Error>> = {
                let mut on_unknown = |p: serde_ignored::Path<'_>| unknown.push(p.to_string());
                serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value.clone(), &mut on_unknown))
            };
            for u in unknown {
                // serde_ignored writes "?" for the Option around a table ("access.?.bogus").
                let steps: Vec<&str> = u.split('.').filter(|s| *s != "?" && !s.is_empty()).collect();
                let path = std::iter::once(key).chain(steps).collect::<Vec<_>>().join(".");
                if !self.unknown.contains(&path) {
                    self.unknown.push(path);
                }
            }
            let e = match result {
                Ok(t) => return t,
                Err(e) => e,
            };
            let mut steps = Vec::new();
            for seg in e.path().iter() {
                match seg {
                    serde_path_to_error::Segment::Seq { index } => steps.push(Step::Index(*index)),
                    serde_path_to_error::Segment::Map { key } => steps.push(Step::Key(key.clone())),
                    _ => break,
                }
            }
            let path = dotted(key, &steps);
            if !self.type_errors.iter().any(|p| p.path == path) {
                let msg = e.into_inner().to_string();
                let rule = type_rule(msg.lines().next().unwrap_or(""));
                let problem = match value_at(&mut value, &steps) {
                    // An integer TOML could not hold, given where a number belongs: shown as written.
                    Some(toml::Value::String(s)) if (rule == "must be an integer" || rule == "must be a number") && beyond_toml_integers(s) => Problem { rule: beyond_toml_integers_rule(&path), got: cut(s.clone()), path },
                    // An inline table or list an override could not parse ("{seed = 2^64}"): why.
                    Some(toml::Value::String(s)) if (rule == "must be a table" || rule == "must be a list") && s.trim_start().starts_with(['{', '[']) && toml_literal_error(s).is_some() => {
                        Problem { rule: format!("{rule}; as written it is no TOML value ({})", toml_literal_error(s).unwrap_or_default()), got: cut(s.clone()), path }
                    }
                    v => Problem { got: v.map(|v| shown(v)).unwrap_or_default(), rule, path },
                };
                self.type_errors.push(problem);
            }
            // Remove the value (a list element: blank it), or if that was done already, its parent.
            loop {
                let Some(last) = steps.last().cloned() else {
                    self.unread.push(key.to_string());
                    return T::default();
                };
                let parent = value_at(&mut value, &steps[..steps.len() - 1]);
                let done = match (last, parent) {
                    (Step::Key(k), Some(toml::Value::Table(t))) => t.remove(&k).is_some(),
                    (Step::Index(i), Some(toml::Value::Array(a))) if i < a.len() && !replaced.contains(&steps) => {
                        a[i] = toml::Value::Table(toml::Table::new());
                        replaced.push(steps.clone());
                        true
                    }
                    _ => false,
                };
                if done {
                    self.unread.push(dotted(key, &steps));
                    break;
                }
                steps.pop();
            }
        }
        self.unread.push(key.to_string());
        T::default()
    }
}

/// A study file (`sattcp sweep`'s: `factors` over a base `scenario`, none of a scenario's
/// sections) given where a scenario is expected: one problem saying so, instead of an unknown
/// key for each of its keys and a missing one for each required link.
fn study_file(tree: &toml::Table) -> Option<Problem> {
    let is_study = tree.contains_key("factors") && !tree.keys().any(|k| SECTIONS.contains(&k.as_str()) && k != "name" && k != "description");
    is_study.then(|| {
        let base = tree.get("scenario").and_then(|v| v.as_str()).map(|s| format!(" over the scenario {s:?}")).unwrap_or_default();
        Problem { path: String::new(), rule: format!("this is a study file (factors{base}), not a scenario: `sattcp sweep` runs a study"), got: String::new() }
    })
}

/// TOML text + overrides + optional seed override -> validated scenario (and the merged tree,
/// which the result carries as the scenario that ran). Every problem is reported at once:
/// unknown keys, values of the wrong type and invalid values.
pub fn load(text: &str, overrides: &[(String, toml::Value)], seed: Option<u64>) -> Result<(Scenario, toml::Table), ScenarioError> {
    let tree = merged_tree(text, overrides)?;
    if let Some(p) = study_file(&tree) {
        return Err(ScenarioError { problems: vec![p] });
    }
    let Read { raw, mut problems, unread } = raw_from_tree(&tree);
    match validate::validate_read(&raw, seed, &unread) {
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

    #[track_caller]
    fn merged(text: &str, overrides: &[(&str, &str)]) -> toml::Table {
        let ov: Vec<_> = overrides.iter().map(|(k, v)| (k.to_string(), parse_override_value(v))).collect();
        merged_tree(text, &ov).unwrap()
    }

    #[test]
    fn a_table_value_merges_into_the_table_there() {
        let tcp = |t: &toml::Table| t["tcp"].as_table().unwrap().clone();
        // tcp={mss=1000} is tcp.mss=1000: flavor and window_scale stay.
        let by_table = merged(GOOD, &[("tcp", "{mss=1000}")]);
        assert_eq!(by_table, merged(GOOD, &[("tcp.mss", "1000")]));
        assert_eq!(tcp(&by_table).keys().collect::<Vec<_>>(), ["flavor", "mss", "window_scale"]);
        assert_eq!(tcp(&by_table)["mss"].as_integer(), Some(1000));
        // Recursively: links={bottleneck={rate="10Mbps"}} keeps the bottleneck's delay and the access link.
        let t = merged(GOOD, &[("links", r#"{bottleneck={rate="10Mbps"}}"#)]);
        assert_eq!(t, merged(GOOD, &[("links.bottleneck.rate", "10Mbps")]));
        assert_eq!(t["links"]["bottleneck"]["delay"].as_str(), Some("275ms"));
        // A table where there was none is set whole; a value that is not a table replaces one.
        assert_eq!(merged(GOOD, &[("app", "{kind=\"bulk\"}")])["app"]["kind"].as_str(), Some("bulk"));
        assert_eq!(merged(GOOD, &[("run.duration", "{x=1}")])["run"]["duration"]["x"].as_integer(), Some(1));
        assert_eq!(merged(GOOD, &[("tcp", "5")])["tcp"].as_integer(), Some(5));
        // Lists are values, replaced whole.
        let t = merged("[trace]\nflows = [0, 1]\n", &[("trace", "{flows=[2]}")]);
        assert_eq!(t["trace"]["flows"].as_array().unwrap().len(), 1);
        // Through load: the scenario keeps the other keys of the file's [tcp].
        let (s, _) = load(GOOD, &[("tcp".into(), parse_override_value("{mss=1000}"))], None).unwrap();
        assert_eq!((s.tcp.mss, s.tcp.window_scale), (1000, 6));
    }

    #[test]
    fn a_study_file_is_named_as_such_in_one_problem() {
        let study = "name = \"s\"\nscenario = \"geo.toml\"\nreplications = 2\n[factors]\n\"tcp.flavor\" = [\"reno\", \"sack\"]\n";
        let p = problems(study, &[]);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].path.as_str(), p[0].rule.as_str()), ("", "this is a study file (factors over the scenario \"geo.toml\"), not a scenario: `sattcp sweep` runs a study"));
        // A scenario with a stray `factors` key is still a scenario: its problems are its own.
        let p = problems(GOOD, &[("factors", "1")]);
        assert_eq!(p.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["factors"]);
    }

    #[test]
    fn override_values_parse_like_toml() {
        assert_eq!(parse_override_value("9180"), toml::Value::Integer(9180));
        assert_eq!(parse_override_value("sack"), toml::Value::String("sack".into()));
        assert_eq!(parse_override_value("1e-5"), toml::Value::Float(1e-5));
        assert_eq!(parse_override_value("\"x\""), toml::Value::String("x".into()));
    }

    /// Every problem, as the user reads it: "path: rule, got VALUE".
    #[track_caller]
    fn shown(text: &str) -> Vec<String> {
        problems(text, &[]).iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn a_type_error_hides_no_other_problem() {
        let text = GOOD.replace("window_scale = 6", "window_scale = \"6\"\n        initial_cwnd = \"x\"").replace("rate = \"45Mbps\"", "rate = \"45Mbs\"").replace("duration = \"10s\"", "duration = \"10s\"\n        speed = 3");
        assert_eq!(
            shown(&text),
            [
                // "speed" is one letter from "seed" (schema::suggestions).
                "run.speed: unknown key (did you mean run.seed?)",
                // In the order of the keys in the table, which is alphabetical.
                "tcp.initial_cwnd: must be an integer, got \"x\"",
                "tcp.window_scale: must be an integer, got \"6\"",
                "links.bottleneck.rate: unknown rate unit \"Mbs\" (use bps, kbps, Mbps or Gbps), got \"45Mbs\"",
            ]
        );
    }

    #[test]
    fn type_errors_use_dotted_paths_and_list_entries_keep_their_index() {
        let text = format!("{GOOD}\n[topology]\npairs = 2\n[[loss]]\nflow = \"x\"\noffset = 0\n[[loss]]\nflow = 7\noffset = 0\n[[loss]]\nflow = 1\nsegment = 2\nbogus = 1\n");
        assert_eq!(
            shown(&text),
            ["loss.2.bogus: unknown key", "loss.0.flow: must be an integer, got \"x\"", "loss.1.flow: must be between 0 and 1, got 7"]
        );
    }

    #[test]
    fn an_integer_beyond_toml_is_named_with_the_range_of_its_key() {
        let shown_with = |ov: &[(&str, &str)]| problems(GOOD, ov).iter().map(|p| p.to_string()).collect::<Vec<_>>();
        // Was "run.seed: must be an integer, got \"18446744073709551615\"": it is one (sweeps and
        // --seed take it), but no TOML integer, so the override fell back to its digits' string.
        assert_eq!(
            shown_with(&[("run.seed", "18446744073709551615")]),
            ["run.seed: is beyond TOML's integers (-2^63 to 2^63 - 1); allowed: 0 to 2^63 - 1 in a file (`--seed` or `--set run.seed=` give up to 2^64 - 1), got 18446744073709551615"]
        );
        // Each key's own range (the schema's), below as above, and for keys whose type is a number.
        assert_eq!(shown_with(&[("topology.pairs", "-99_999_999_999_999_999_999")]), ["topology.pairs: is beyond TOML's integers (-2^63 to 2^63 - 1); allowed: 1 to 100000 (a path: 1), got -99_999_999_999_999_999_999"]);
        assert_eq!(shown_with(&[("switch.R", "99999999999999999999")]), ["switch.R: is beyond TOML's integers (-2^63 to 2^63 - 1); allowed: (0, 1], got 99999999999999999999"]);
        // In a table or a list the override could not parse, the reason (was "run: must be a table").
        assert_eq!(
            shown_with(&[("run", "{seed = 18446744073709551615}")]),
            ["run: must be a table; as written it is no TOML value (number too large to fit in target type, beyond TOML's integers (-2^63 to 2^63 - 1)), got {seed = 18446744073709551615}"]
        );
        // A list or table whose strings the shell unquoted: one line (toml's message had two),
        // and the value that would have been meant.
        assert_eq!(
            shown_with(&[("trace.links", "[bottlenek]")]),
            ["trace.links: must be a list; as written it is no TOML value (invalid array: expected `]`; strings in it are quoted: [\"bottlenek\"]), got [bottlenek]"]
        );
        assert_eq!(
            shown_with(&[("tcp", "{mss = 1000, flavor = sack/cubic}")]),
            ["tcp: must be a table; as written it is no TOML value (invalid string: expected `\"`, `'`; strings in it are quoted: {mss = 1000, flavor = \"sack/cubic\"}), got {mss = 1000, flavor = sack/cubic}"]
        );
        // No hint where quoting changes nothing or does not help.
        assert_eq!(shown_with(&[("trace.flows", "[0,")]), ["trace.flows: must be a list; as written it is no TOML value (invalid array: expected `]`), got [0,"]);
        assert_eq!(quote_bare_words(r#"{a.b = x, c = "y z", d = 'w', e = [1e-5, true, inf, 45Mbps]}"#), r#"{a.b = "x", c = "y z", d = 'w', e = [1e-5, true, inf, "45Mbps"]}"#);
        // The largest TOML integer is a seed; a string of digits that fits is still a string.
        let (s, _) = load(GOOD, &[("run.seed".into(), parse_override_value("9223372036854775807"))], None).unwrap();
        assert_eq!(s.seed, i64::MAX as u64);
        assert_eq!(shown_with(&[("run.seed", "\"12\"")]), ["run.seed: must be an integer, got \"12\""]);
        assert_eq!(shown_with(&[("run.seed", "1_2_")]), ["run.seed: must be an integer, got \"1_2_\""]);
        // In a file, TOML's own syntax error, with the limit.
        let p = problems(&GOOD.replace("[run]", "[run]\nseed = 18446744073709551615"), &[]);
        assert_eq!(p[0].rule, "TOML syntax error at line 3: number too large to fit in target type (beyond TOML's integers (-2^63 to 2^63 - 1))");
    }

    #[test]
    fn unknown_keys_inside_optional_tables_have_plain_paths() {
        // serde_ignored writes the Option around links.access as "?": "links.access.?.colour".
        assert_eq!(shown(&format!("colour = 1\n{GOOD}")), ["colour: unknown key"]);
        assert_eq!(problems(GOOD, &[("links.access.colour", "\"red\"")])[0].path, "links.access.colour");
    }

    #[test]
    fn values_that_could_not_be_read_cause_no_further_problems() {
        // pairs unread: loss.0.flow = 1 is not judged against the default of one pair.
        let text = format!("{GOOD}\n[topology]\npairs = \"2\"\n[[loss]]\nflow = 1\nsegment = 0\n");
        assert_eq!(shown(&text), ["topology.pairs: must be an integer, got \"2\""]);
        // A whole section of the wrong type: no "links.access: is required".
        assert_eq!(problems("links = 5\n", &[]).iter().map(|p| p.to_string()).collect::<Vec<_>>(), ["links: must be a table, got 5"]);
        // The kind of switch unread: its buffer is not judged as a drop-tail one.
        assert_eq!(shown(&GOOD.replace("buffer = \"1bdp\"", "buffer = \"2300cells\"\n        kind = 1")), ["switch.kind: must be a string, got 1"]);
        // A list of integers with a string in it.
        assert_eq!(problems(GOOD, &[("trace.flows", "[0, \"a\"]")])[0].to_string(), "trace.flows.1: must be an integer, got \"a\"");
    }
}
