//! The scenario's `trace.packets` key: which packet events a run records.
//!
//! ```toml
//! [trace]
//! packets = "all"                       # every packet event ("none", the default: no packet trace)
//! packets = { flows = [0, 3] }          # the events of flows 0 and 3, on every link
//! packets = { links = ["bottleneck"] }  # every flow's events on the bottleneck
//! max_packet_events = 5000000           # the log's bound (trace::DEFAULT_MAX_EVENTS)
//! ```
//!
//! A `links` selection keeps only the events on those links: not the events at hosts (sent,
//! received, a scripted drop at the sender), which have no link.

use super::PacketFilter;
use crate::scenario::Problem;

fn problem(path: &str, rule: impl Into<String>, got: impl Into<String>) -> Problem {
    Problem { path: path.into(), rule: rule.into(), got: got.into() }
}

const RULE: &str = "must be \"all\", \"none\" or a table with flows (a list of flow numbers) and/or links (a list of link names)";

/// Reads `trace.packets` (absent: no packet trace). `nflows` and `link_names` are `None` when
/// the topology could not be read (then the numbers and names are not checked).
pub fn packets(v: Option<&toml::Value>, nflows: Option<u64>, link_names: Option<&[String]>) -> Result<Option<PacketFilter>, Vec<Problem>> {
    let path = "trace.packets";
    let Some(v) = v else { return Ok(None) };
    let mut problems = Vec::new();
    let filter = match v {
        toml::Value::String(s) if s == "all" => Some(PacketFilter::default()),
        toml::Value::String(s) if s == "none" => None,
        toml::Value::Table(t) => {
            let mut f = PacketFilter::default();
            for (k, v) in t {
                let p = format!("{path}.{k}");
                match (k.as_str(), v) {
                    ("flows", toml::Value::Array(a)) => {
                        let mut flows = Vec::new();
                        for (i, x) in a.iter().enumerate() {
                            match x.as_integer() {
                                Some(n) if n >= 0 && nflows.is_none_or(|m| (n as u64) < m) && n <= u32::MAX as i64 => flows.push(n as u32),
                                Some(n) => problems.push(problem(&format!("{p}.{i}"), format!("must name a flow between 0 and {}", nflows.map_or(u32::MAX as u64, |m| m.saturating_sub(1))), n.to_string())),
                                None => problems.push(problem(&format!("{p}.{i}"), "must be an integer", x.to_string())),
                            }
                        }
                        f.flows = Some(flows);
                    }
                    ("links", toml::Value::Array(a)) => {
                        let mut links = Vec::new();
                        for (i, x) in a.iter().enumerate() {
                            match x.as_str() {
                                Some(name) if link_names.is_none_or(|ns| ns.iter().any(|n| n == name)) => links.push(name.to_string()),
                                Some(name) => {
                                    let ns = link_names.unwrap_or_default();
                                    let few: Vec<&str> = ns.iter().take(6).map(|n| n.as_str()).collect();
                                    let more = if ns.len() > few.len() { format!(", ... ({} links)", ns.len()) } else { String::new() };
                                    problems.push(problem(&format!("{p}.{i}"), format!("must name a link of the topology: {}{more}", few.join(", ")), format!("{name:?}")));
                                }
                                None => problems.push(problem(&format!("{p}.{i}"), "must be a link name (a string)", x.to_string())),
                            }
                        }
                        f.links = Some(links);
                    }
                    ("flows", _) => problems.push(problem(&p, "must be a list of flow numbers", v.to_string())),
                    ("links", _) => problems.push(problem(&p, "must be a list of link names", v.to_string())),
                    _ => {
                        use crate::scenario::schema::{closest, unknown_key_meaning};
                        let meant: Vec<String> = closest(k, &["flows", "links"]).iter().map(|a| format!("{path}.{a}")).collect();
                        problems.push(problem(&p, unknown_key_meaning(&meant), ""));
                    }
                }
            }
            Some(f)
        }
        other => {
            problems.push(problem(path, RULE, other.to_string()));
            None
        }
    };
    if problems.is_empty() {
        Ok(filter)
    } else {
        Err(problems)
    }
}

/// `trace.packets` as written for a selection (the resolved scenario).
pub fn to_value(f: Option<&PacketFilter>) -> toml::Value {
    match f {
        None => toml::Value::String("none".into()),
        Some(PacketFilter { flows: None, links: None }) => toml::Value::String("all".into()),
        Some(f) => {
            let mut t = toml::Table::new();
            if let Some(flows) = &f.flows {
                t.insert("flows".into(), toml::Value::Array(flows.iter().map(|&n| toml::Value::Integer(n as i64)).collect()));
            }
            if let Some(links) = &f.links {
                t.insert("links".into(), toml::Value::Array(links.iter().map(|n| toml::Value::String(n.clone())).collect()));
            }
            toml::Value::Table(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Option<PacketFilter>, Vec<String>> {
        let v: toml::Table = toml::from_str(&format!("packets = {text}")).unwrap();
        let names = ["bottleneck".to_string(), "bottleneck-rev".to_string()];
        packets(v.get("packets"), Some(4), Some(&names)).map_err(|ps| ps.iter().map(|p| p.to_string()).collect())
    }

    #[test]
    fn all_none_and_selections() {
        assert_eq!(read("\"all\""), Ok(Some(PacketFilter::default())));
        assert_eq!(read("\"none\""), Ok(None));
        assert_eq!(packets(None, None, None), Ok(None));
        assert_eq!(read("{ flows = [0, 3] }"), Ok(Some(PacketFilter { flows: Some(vec![0, 3]), links: None })));
        assert_eq!(read("{ links = [\"bottleneck\"], flows = [] }"), Ok(Some(PacketFilter { flows: Some(vec![]), links: Some(vec!["bottleneck".into()]) })));
        // Written back as read (the resolved scenario).
        for text in ["\"all\"", "\"none\"", "{ flows = [0, 3] }", "{ flows = [1], links = [\"bottleneck\"] }"] {
            let f = read(text).unwrap();
            let v: toml::Table = toml::from_str(&format!("packets = {text}")).unwrap();
            assert_eq!(to_value(f.as_ref()), v["packets"], "{text}");
        }
    }

    #[test]
    fn every_problem_with_its_path() {
        assert_eq!(read("\"some\""), Err(vec![format!("trace.packets: {RULE}, got \"some\"")]));
        assert_eq!(read("true"), Err(vec![format!("trace.packets: {RULE}, got true")]));
        assert_eq!(
            read("{ flows = [1, 4, \"x\"], links = [\"nope\"], every = 2 }"),
            Err(vec![
                "trace.packets.every: unknown key".to_string(),
                "trace.packets.flows.1: must name a flow between 0 and 3, got 4".to_string(),
                "trace.packets.flows.2: must be an integer, got \"x\"".to_string(),
                "trace.packets.links.0: must name a link of the topology: bottleneck, bottleneck-rev, got \"nope\"".to_string(),
            ])
        );
        assert_eq!(read("{ flows = 1 }"), Err(vec!["trace.packets.flows: must be a list of flow numbers, got 1".to_string()]));
        // A misspelt key names the one meant (scenario::schema::closest's rule).
        assert_eq!(read("{ flow = [1] }"), Err(vec!["trace.packets.flow: unknown key (did you mean trace.packets.flows?)".to_string()]));
        assert_eq!(read("{ Link = [\"bottleneck\"] }"), Err(vec!["trace.packets.Link: unknown key (did you mean trace.packets.links?)".to_string()]));
    }
}
