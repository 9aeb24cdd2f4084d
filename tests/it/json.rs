//! Every `--json` document against the one schema, `docs/json-schema.json`,
//! on real temporary repositories. The validator below knows the subset of
//! JSON Schema (draft 2020-12) the file uses: `type` (one or a list),
//! `properties`, `required`, `additionalProperties: false`, `items`, `enum`,
//! `format: date-time` (RFC 3339 to the second), `$ref` into `$defs`; a keyword it does not know fails the test, so the
//! schema cannot say more than is checked.

use serde_json::{Map, Value};

use crate::common::Brain;

const SCHEMA: &str = include_str!("../../docs/json-schema.json");

const KNOWN: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "format",
];

fn schema() -> Value {
    serde_json::from_str(SCHEMA).expect("docs/json-schema.json is JSON")
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    let actual = type_name(v);
    actual == t || (t == "number" && actual == "integer")
}

/// The errors of `v` against `s`, each with its JSON pointer.
fn check(root: &Value, s: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(s) = s.as_object() else {
        errors.push(format!("{at}: the schema is not an object"));
        return;
    };
    for k in s.keys() {
        assert!(
            KNOWN.contains(&k.as_str()),
            "the schema uses `{k}`, which this validator does not check"
        );
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/$defs/")
            .unwrap_or_else(|| panic!("unsupported $ref {r}"));
        let target = &root["$defs"][name];
        assert!(!target.is_null(), "$ref to a missing definition {r}");
        check(root, target, v, at, errors);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => has_type(v, t),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| has_type(v, t)),
            _ => panic!("bad type keyword {t}"),
        };
        if !ok {
            errors.push(format!("{at}: {} is not of type {t}", type_name(v)));
            return;
        }
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errors.push(format!(
            "{at}: {v} is not one of {}",
            Value::Array(e.clone())
        ));
    }
    if let (Some(f), Value::String(t)) = (s.get("format").and_then(Value::as_str), v) {
        assert_eq!(f, "date-time", "unsupported format {f}");
        if chrono::DateTime::parse_from_rfc3339(t).is_err() || t.contains('.') {
            errors.push(format!("{at}: `{t}` is not an RFC 3339 time to the second"));
        }
    }
    if let Value::Object(obj) = v {
        object(root, s, obj, at, errors);
    }
    if let (Value::Array(items), Some(each)) = (v, s.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(root, each, item, &format!("{at}/{i}"), errors);
        }
    }
}

fn object(
    root: &Value,
    s: &Map<String, Value>,
    obj: &Map<String, Value>,
    at: &str,
    errors: &mut Vec<String>,
) {
    let props = s.get("properties").and_then(Value::as_object);
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = r.as_str().expect("required names are strings");
        if !obj.contains_key(r) {
            errors.push(format!("{at}: `{r}` is missing"));
        }
    }
    for (k, val) in obj {
        match props.and_then(|p| p.get(k)) {
            Some(ps) => check(root, ps, val, &format!("{at}/{k}"), errors),
            None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                errors.push(format!("{at}: `{k}` is not in the schema"));
            }
            None => {}
        }
    }
}

/// Asserts that `stdout` is one JSON document valid as `$defs/<def>`.
#[track_caller]
fn valid(def: &str, stdout: &str) -> Value {
    let root = schema();
    let s = &root["$defs"][def];
    assert!(!s.is_null(), "the schema has no definition `{def}`");
    let v: Value = serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("`{def}` output is not JSON ({e}):\n{stdout}"));
    let mut errors = Vec::new();
    check(&root, s, &v, "", &mut errors);
    assert!(
        errors.is_empty(),
        "`{def}` output breaks docs/json-schema.json:\n  {}\n{stdout}",
        errors.join("\n  ")
    );
    v
}

#[test]
fn the_validator_catches_what_the_schema_forbids() {
    let root = schema();
    let claim = &root["$defs"]["claim"];
    let mut errors = Vec::new();
    let bad = serde_json::json!({"session": "s1", "scope": 3, "level": "galaxy", "extra": true});
    check(&root, claim, &bad, "", &mut errors);
    let all = errors.join("\n");
    for wanted in [
        "/scope: integer",
        "/level: \"galaxy\"",
        "`extra` is not",
        "`expires` is missing",
    ] {
        assert!(all.contains(wanted), "{wanted} not reported:\n{all}");
    }
    let mut errors = Vec::new();
    check(
        &root,
        &root["$defs"]["commit"],
        &Value::Null,
        "",
        &mut errors,
    );
    check(
        &root,
        &root["$defs"]["commit"],
        &Value::from("abc"),
        "",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    check(
        &root,
        &root["$defs"]["commit"],
        &Value::from(1),
        "",
        &mut errors,
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    let time = &root["$defs"]["time"];
    let mut errors = Vec::new();
    let east = Value::from("2026-03-14T09:30:00+02:00");
    check(&root, time, &east, "", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    for bad in ["2026-03-14 09:30", "2026-03-14T09:30:00.5Z"] {
        check(&root, time, &Value::from(bad), "", &mut errors);
    }
    assert_eq!(errors.len(), 2, "{errors:?}");
}

#[test]
fn every_json_document_matches_the_schema() {
    let b = Brain::new();
    let later = "2026-03-14T12:30:00Z";

    let r = b.bsi(&["status", "--json"]);
    r.ok();
    valid("status", &r.stdout);

    let r = b.bsi(&["open", "agents/alice.md", "--session", "s1", "--json"]);
    r.ok();
    let v = valid("open", &r.stdout);
    assert!(v["commit"].is_string(), "{v}");
    // Asked again: nothing written, the same shape with a null commit.
    let r = b.bsi(&["open", "agents/alice.md", "--session", "s1", "--json"]);
    r.ok();
    let v = valid("open", &r.stdout);
    assert!(v["commit"].is_null(), "{v}");

    let r = b.bsi(&["open", "agents/", "--session", "s2", "--json"]);
    r.code(3);
    let v = valid("open-refused", &r.stdout);
    assert_eq!(v["conflicts"][0]["session"], "s1");

    b.bsi(&["open", "projets/plan.md#Risks", "--session", "s2"])
        .ok();
    let r = b.bsi(&["status", "--json"]);
    r.ok();
    valid("status", &r.stdout);

    let r = b.bsi_env(&["whoami", "--json"], &[("BSI_SESSION", "s1")]);
    r.ok();
    valid("whoami", &r.stdout);

    let r = b.bsi(&["renew", "s1", "--json"]);
    r.ok();
    assert!(valid("renew", &r.stdout)["commit"].is_null());
    let r = b.bsi(&["renew", "s1", "--ttl", "4h", "--json"]);
    r.ok();
    assert!(valid("renew", &r.stdout)["commit"].is_string());

    // A commit of s1 outside its claims: verify reports an overflow.
    b.write("agents/bob.md", "# Bob\n\nmore\n");
    b.write("agents/alice.md", "# Alice\n\nnotes\nmore\n");
    b.git(&["add", "-A"]);
    b.git(&["commit", "-q", "-m", "work\n\nBSI-Session: s1"]);
    let r = b.bsi(&["verify", "s1", "--json"]);
    r.code(6);
    let v = valid("verify", &r.stdout);
    assert_eq!(v["clean"], false, "{v}");
    let r = b.bsi(&["verify", "s2", "--json"]);
    r.ok();
    valid("verify", &r.stdout);

    let r = b.bsi(&["close", "s1", "--json"]);
    r.ok();
    let v = valid("close", &r.stdout);
    assert!(v["commit"].is_string(), "{v}");
    // Closed again: done before, said in the same document.
    let r = b.bsi(&["close", "s1", "--json"]);
    r.ok();
    let v = valid("close", &r.stdout);
    assert_eq!(v["status"], "already-closed", "{v}");

    // s2 expires: the watchdog moves it to the stale table.
    let r = b.bsi_env(&["watchdog", "--json"], &[("BSI_NOW", later)]);
    r.code(4);
    let v = valid("watchdog", &r.stdout);
    assert!(v["commit"].is_string(), "{v}");
    assert_eq!(v["moved"][0]["stale"], true, "{v}");
    let r = b.bsi_env(&["status", "--json"], &[("BSI_NOW", later)]);
    valid("status", &r.stdout);

    let r = b.bsi_env(&["release", "s2", "--json"], &[("BSI_NOW", later)]);
    r.ok();
    let v = valid("release", &r.stdout);
    assert_eq!(v["dry_run"], true, "{v}");
    assert!(v["commit"].is_null(), "{v}");
    let r = b.bsi_env(
        &["release", "s2", "--confirm", "--json"],
        &[("BSI_NOW", later)],
    );
    r.ok();
    let v = valid("release", &r.stdout);
    assert!(v["commit"].is_string(), "{v}");

    let r = b.bsi(&["log", "--json"]);
    r.ok();
    valid("log", &r.stdout);

    // Errors, each the same document.
    for (args, code) in [
        (&["sync", "--json"][..], 1),
        (&["release", "nobody", "--json"][..], 1),
        (
            &[
                "open",
                "nowhere/",
                "--session",
                "s9",
                "--ttl",
                "99h",
                "--json",
            ][..],
            2,
        ),
        (&["close", "--json"][..], 2),
        // Refused by their type while the command line is read.
        (&["open", "agents/", "--session", "a b", "--json"][..], 2),
        (&["open", "agents/", "--agent", "a|b", "--json"][..], 2),
        (&["renew", "s1", "--ttl", "9h", "--json"][..], 2),
        // A command line clap cannot read.
        (&["status", "--json", "--bogus"][..], 2),
        (&["open", "--json"][..], 2),
    ] {
        let r = b.bsi(args);
        r.code(code);
        valid("error", &r.stdout);
    }

    // With a remote: sync, and status with its sync state.
    let _remote = b.publish_to_bare();
    b.bsi(&["open", "agents/bob.md", "--session", "s3"]).ok();
    let r = b.bsi(&["sync", "--json"]);
    r.ok();
    valid("sync", &r.stdout);
    for args in [
        &["status", "--json"][..],
        &["status", "--json", "--offline"][..],
    ] {
        let r = b.bsi(args);
        r.ok();
        let v = valid("status", &r.stdout);
        assert!(v["sync"].is_object(), "{v}");
    }
    let r = b.bsi_env(&["whoami", "--json"], &[("BSI_SESSION", "s3")]);
    r.ok();
    valid("whoami", &r.stdout);
}

#[test]
fn commit_json_matches_the_schema() {
    let b = Brain::new();
    b.bsi(&["open", "agents/bob.md", "--session", "s1"]).ok();
    b.write("agents/bob.md", "# Bob\n\nmine\n");
    b.write("README.md", "# Brain\n\nno one's\n");
    let r = b.bsi(&["commit", "--session", "s1", "-m", "bob", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = valid("commit-own", &r.stdout);
    assert_eq!(v["files"][0]["path"], "agents/bob.md");
    assert_eq!(v["left"][0]["holder"], Value::Null);
    let none = b.bsi(&["commit", "--session", "s1", "--json"]);
    assert_eq!(none.code, 1, "{none:?}");
    assert_eq!(valid("commit-own", &none.stdout)["commit"], Value::Null);
}

#[test]
fn recover_json_matches_the_schema() {
    let b = Brain::new();
    b.bsi(&["open", "agents/", "--session", "s1"]).ok();
    b.write("agents/new.md", "# New\n\nmine\n");
    b.bsi_env(&["status"], &[("BSI_SESSION", "s1")]).ok();
    b.git(&["clean", "-fdq"]);
    let r = b.bsi(&["recover", "s1", "--json"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = valid("recover", &r.stdout);
    assert_eq!(v["restored"][0]["path"], "agents/new.md");
    let none = b.bsi(&["recover", "s2", "--json"]);
    assert_eq!(valid("recover", &none.stdout)["copy"], Value::Null);
}
