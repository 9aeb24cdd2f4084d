//! JSON settings edited as their bytes: a reader that keeps where every
//! member of a JSON object starts and ends (comments and trailing commas
//! read too: OpenCode's settings are JSONC), and the two edits bsi makes,
//! adding one member at the end of an object and taking one out, as
//! splices of exactly those bytes. Every other byte of the file (comments,
//! key order, inline objects, escapes, line ends, the final newline) stays
//! as the person wrote it, and taking out a member bsi added gives back
//! the bytes the file had before. Pure; never panics on input.

use serde_json::Value;

/// How deep objects and arrays may nest before the text is refused.
const MAX_DEPTH: usize = 128;

/// A value of the text, with its bytes.
#[derive(Debug, Clone)]
pub struct Node {
    /// Where it starts.
    pub start: usize,
    /// Where it ends (one past its last byte).
    pub end: usize,
    /// What it is.
    pub kind: Kind,
}

/// What a [`Node`] is.
#[derive(Debug, Clone)]
pub enum Kind {
    /// An object: its members in order, and the end of the last token
    /// (a value, a comma or a comment) before its `}`.
    Object {
        /// The members, in order.
        members: Vec<Member>,
        /// The end of the last token before the closing brace.
        inner_end: usize,
    },
    /// An array: its items (as members without a key) and the end of the
    /// last token before its `]`.
    Array {
        /// The items, in order (each [`Member::key`] empty).
        items: Vec<Member>,
        /// The end of the last token before the closing bracket.
        inner_end: usize,
    },
    /// A string, number, `true`, `false` or `null`.
    Scalar(Value),
}

/// A member of an object, or an item of an array (its key empty, its
/// `key_start` where its value starts).
#[derive(Debug, Clone)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Where the key's string starts.
    pub key_start: usize,
    /// The end of the token before the key (the `{`, a `,` or a comment).
    pub before: usize,
    /// The value.
    pub value: Node,
    /// Where the comma after the value is, if any.
    pub comma: Option<usize>,
}

impl Node {
    /// The members, for an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object { members, .. } => Some(members),
            _ => None,
        }
    }

    /// The items, for an array.
    pub fn items(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Array { items, .. } => Some(items),
            _ => None,
        }
    }

    /// The last member named `key` (the one a JSON reader keeps), for an
    /// object.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().rev().find(|m| m.key == key)
    }

    /// The value as JSON.
    pub fn to_value(&self) -> Value {
        match &self.kind {
            Kind::Scalar(v) => v.clone(),
            Kind::Array { items, .. } => {
                Value::Array(items.iter().map(|i| i.value.to_value()).collect())
            }
            Kind::Object { members, .. } => Value::Object(
                members
                    .iter()
                    .map(|m| (m.key.clone(), m.value.to_value()))
                    .collect(),
            ),
        }
    }
}

/// Reads `text` as JSON with comments and trailing commas. The error says
/// where the text stops being JSON.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        last_end: 0,
    };
    p.skip()?;
    let node = p.value(0)?;
    p.skip()?;
    if p.at < p.bytes.len() {
        return Err(p.error("text after the end of the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// The end of the last token read (comments included).
    last_end: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{what} at line {line} column {column}")
    }

    /// Skips blanks and comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            match self.bytes.get(self.at) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'/') => {
                    while self.at < self.bytes.len() && self.bytes[self.at] != b'\n' {
                        self.at += 1;
                    }
                    // The newline is a blank: the comment ends before it.
                    let mut end = self.at;
                    if end > 0 && self.bytes[end - 1] == b'\r' {
                        end -= 1;
                    }
                    self.last_end = end;
                }
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'*') => {
                    let Some(len) = self.text[self.at + 2..].find("*/") else {
                        return Err(self.error("a comment that does not end"));
                    };
                    self.at += len + 4;
                    self.last_end = self.at;
                }
                _ => return Ok(()),
            }
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.bytes.get(self.at) == Some(&b) {
            self.at += 1;
            self.last_end = self.at;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("values nested too deep"));
        }
        let start = self.at;
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let end = self.string_end()?;
                let v = serde_json::from_str::<Value>(&self.text[start..end])
                    .map_err(|_| self.error("a string that is not JSON"))?;
                Ok(self.scalar(start, end, v))
            }
            Some(_) => {
                let mut end = start;
                while end < self.bytes.len()
                    && matches!(self.bytes[end], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
                {
                    end += 1;
                }
                let v = serde_json::from_str::<Value>(&self.text[start..end])
                    .ok()
                    .filter(|_| end > start)
                    .ok_or_else(|| self.error("not a JSON value"))?;
                Ok(self.scalar(start, end, v))
            }
            None => Err(self.error("the text ends where a value should be")),
        }
    }

    fn scalar(&mut self, start: usize, end: usize, v: Value) -> Node {
        self.at = end;
        self.last_end = end;
        Node {
            start,
            end,
            kind: Kind::Scalar(v),
        }
    }

    /// The end of the string that starts here.
    fn string_end(&self) -> Result<usize, String> {
        let mut i = self.at + 1;
        while let Some(&b) = self.bytes.get(i) {
            match b {
                b'\\' => i += 2,
                b'"' => return Ok(i + 1),
                _ => i += 1,
            }
        }
        Err(self.error("a string that does not end"))
    }

    fn object(&mut self, depth: usize) -> Result<Node, String> {
        let start = self.at;
        self.eat(b'{');
        let mut members: Vec<Member> = Vec::new();
        loop {
            self.skip()?;
            if self.bytes.get(self.at) == Some(&b'}') {
                let inner_end = self.last_end;
                self.eat(b'}');
                return Ok(Node {
                    start,
                    end: self.at,
                    kind: Kind::Object { members, inner_end },
                });
            }
            if members.last().is_some_and(|m| m.comma.is_none()) {
                return Err(self.error("a `,` or `}` expected"));
            }
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("a key expected"));
            }
            let before = self.last_end;
            let key_start = self.at;
            let key_end = self.string_end()?;
            let key = serde_json::from_str::<String>(&self.text[key_start..key_end])
                .map_err(|_| self.error("a key that is not a JSON string"))?;
            self.at = key_end;
            self.last_end = key_end;
            self.skip()?;
            if !self.eat(b':') {
                return Err(self.error("a `:` expected"));
            }
            self.skip()?;
            let value = self.value(depth + 1)?;
            self.skip()?;
            let comma = (self.bytes.get(self.at) == Some(&b',')).then_some(self.at);
            if comma.is_some() {
                self.eat(b',');
            }
            members.push(Member {
                key,
                key_start,
                before,
                value,
                comma,
            });
        }
    }

    fn array(&mut self, depth: usize) -> Result<Node, String> {
        let start = self.at;
        self.eat(b'[');
        let mut items: Vec<Member> = Vec::new();
        loop {
            self.skip()?;
            if self.bytes.get(self.at) == Some(&b']') {
                let inner_end = self.last_end;
                self.eat(b']');
                return Ok(Node {
                    start,
                    end: self.at,
                    kind: Kind::Array { items, inner_end },
                });
            }
            if items.last().is_some_and(|m| m.comma.is_none()) {
                return Err(self.error("a `,` or `]` expected"));
            }
            let before = self.last_end;
            let key_start = self.at;
            let value = self.value(depth + 1)?;
            self.skip()?;
            let comma = (self.bytes.get(self.at) == Some(&b',')).then_some(self.at);
            if comma.is_some() {
                self.eat(b',');
            }
            items.push(Member {
                key: String::new(),
                key_start,
                before,
                value,
                comma,
            });
        }
    }
}

/// The line end the text uses: `\r\n` when it has one, else `\n`.
fn line_end(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// The text's unit of indentation: the first indentation of a line after
/// the first (two spaces when it has none).
fn indent_unit(text: &str) -> &str {
    text.lines()
        .skip(1)
        .map(|l| &l[..l.len() - l.trim_start().len()])
        .find(|w| !w.is_empty())
        .unwrap_or("  ")
}

/// The blanks after the last newline of `s`.
fn after_newline(s: &str) -> &str {
    s.rfind('\n').map_or("", |i| &s[i + 1..])
}

/// `v` as JSON text: on one line (`{"a": 1, "b": [2]}`), or laid out over
/// lines with `unit` per level, its lines after the first starting with
/// `base`, ended with `nl`.
pub fn render(v: &Value, unit: &str, base: &str, nl: &str, inline: bool) -> String {
    let mut out = String::new();
    write_value(&mut out, v, unit, base, nl, inline);
    out
}

fn write_value(out: &mut String, v: &Value, unit: &str, indent: &str, nl: &str, inline: bool) {
    let inner = format!("{indent}{unit}");
    let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match v {
        Value::Object(m) => ('{', '}', m.iter().map(|(k, v)| (Some(k), v)).collect()),
        Value::Array(a) => ('[', ']', a.iter().map(|v| (None, v)).collect()),
        scalar => {
            out.push_str(&scalar.to_string());
            return;
        }
    };
    out.push(open);
    if items.is_empty() {
        out.push(close);
        return;
    }
    for (i, (key, item)) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
            if inline {
                out.push(' ');
            }
        }
        if !inline {
            out.push_str(nl);
            out.push_str(&inner);
        }
        if let Some(k) = key {
            out.push_str(&Value::String(k.clone()).to_string());
            out.push_str(": ");
        }
        write_value(out, item, unit, &inner, nl, inline);
    }
    if !inline {
        out.push_str(nl);
        out.push_str(indent);
    }
    out.push(close);
}

/// `text` with the member `key: value` added at the end of `object` (a
/// node of `text`), laid out as the object's other members are: on their
/// own lines, or inline. A trailing comma stays trailing.
pub fn insert_member(text: &str, object: &Node, key: &str, value: &Value) -> String {
    insert(text, object, Some(key), value)
}

/// `text` with `value` added at the end of the array `array` (a node of
/// `text`), laid out as [`insert_member`] lays out a member.
pub fn push_item(text: &str, array: &Node, value: &Value) -> String {
    insert(text, array, None, value)
}

fn insert(text: &str, object: &Node, key: Option<&str>, value: &Value) -> String {
    let (members, inner_end) = match &object.kind {
        Kind::Object { members, inner_end }
        | Kind::Array {
            items: members,
            inner_end,
        } => (members, inner_end),
        Kind::Scalar(_) => return text.to_string(),
    };
    let nl = line_end(text);
    let unit = indent_unit(text);
    let close = object.end.saturating_sub(1);
    // (where the member goes, the blanks before it)
    let (at, sep) = if let Some(last) = members.last() {
        // The blanks before the last member's key.
        let sep = &text[last.before..last.key_start];
        let sep = if sep.is_empty() { " " } else { sep };
        (*inner_end, sep.to_string())
    } else {
        let inside = &text[object.start + 1..close];
        if inside.contains('\n') {
            let closing = after_newline(inside);
            (object.start + 1, format!("{nl}{closing}{unit}"))
        } else {
            (object.start + 1, String::new())
        }
    };
    let inline = !sep.contains('\n');
    let base = after_newline(&sep).to_string();
    // After a line comment, the member starts on a line of its own.
    let after_comment = text[..at].rfind('\n').map_or(&text[..at], |i| &text[i..at]);
    let sep = if after_comment.contains("//") && inline && at != object.start + 1 {
        format!("{nl}{sep}")
    } else {
        sep
    };
    let key = key.map_or(String::new(), |k| format!("{}: ", Value::String(k.into())));
    let member = format!("{sep}{key}{}", render(value, unit, &base, nl, inline));
    let mut out = String::with_capacity(text.len() + member.len() + 1);
    match members.last() {
        Some(last) if last.comma.is_some() => {
            out.push_str(&text[..at]);
            out.push_str(&member);
            out.push(',');
            out.push_str(&text[at..]);
        }
        Some(last) => {
            out.push_str(&text[..last.value.end]);
            out.push(',');
            out.push_str(&text[last.value.end..at]);
            out.push_str(&member);
            out.push_str(&text[at..]);
        }
        None => {
            out.push_str(&text[..at]);
            out.push_str(&member);
            out.push_str(&text[at..]);
        }
    }
    out
}

/// `text` without the member (or item) `index` of `object`: the bytes
/// [`insert_member`] added for it, so that a member it added comes out
/// leaving the text as it was.
pub fn remove_member(text: &str, object: &Node, index: usize) -> String {
    let members = match &object.kind {
        Kind::Object { members, .. } | Kind::Array { items: members, .. } => members,
        Kind::Scalar(_) => return text.to_string(),
    };
    let Some(m) = members.get(index) else {
        return text.to_string();
    };
    let mut out = text.to_string();
    match (m.comma, index.checked_sub(1).and_then(|i| members.get(i))) {
        // Followed by a comma: the member and its comma.
        (Some(comma), _) => out.replace_range(m.before..comma + 1, ""),
        // The last member, after another: the member and the comma before
        // it.
        (None, Some(prev)) => {
            out.replace_range(m.before..m.value.end, "");
            if let Some(c) = prev.comma {
                out.replace_range(c..c + 1, "");
            }
        }
        // The only member.
        (None, None) => out.replace_range(m.before..m.value.end, ""),
    }
    out
}

/// `text` with the value of `member` replaced by `value`, laid out as
/// [`insert_member`] would.
pub fn replace_value(text: &str, member: &Member, value: &Value) -> String {
    let nl = line_end(text);
    let unit = indent_unit(text);
    let sep = &text[member.before..member.key_start];
    let inline = !sep.contains('\n');
    let base = after_newline(sep);
    let mut out = text.to_string();
    out.replace_range(
        member.value.start..member.value.end,
        &render(value, unit, base, nl, inline),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(text: &str, path: &[&str]) -> String {
        let root = parse(text).expect("parses");
        let mut obj = &root;
        for k in path {
            obj = &obj.member(k).expect("member").value;
        }
        let added = insert_member(
            text,
            obj,
            "bsi",
            &json!({"command": "bsi", "args": ["mcp"]}),
        );
        let again = parse(&added).unwrap_or_else(|e| panic!("{e}\n{added}"));
        let mut obj = &again;
        for k in path {
            obj = &obj.member(k).expect("member").value;
        }
        let at = obj
            .members()
            .expect("object")
            .iter()
            .position(|m| m.key == "bsi")
            .expect("added");
        assert_eq!(remove_member(&added, obj, at), text, "{added}");
        added
    }

    #[test]
    fn a_member_added_comes_out_leaving_the_bytes() {
        let added = round_trip("{\n  \"a\": 1\n}\n", &[]);
        assert_eq!(
            added,
            "{\n  \"a\": 1,\n  \"bsi\": {\n    \"command\": \"bsi\",\n    \"args\": [\n      \"mcp\"\n    ]\n  }\n}\n"
        );
        let added = round_trip("{\"s\": {\"x\": {\"command\": \"caf\\u00e9\"}}}", &["s"]);
        assert_eq!(
            added,
            "{\"s\": {\"x\": {\"command\": \"caf\\u00e9\"}, \"bsi\": {\"command\": \"bsi\", \"args\": [\"mcp\"]}}}"
        );
        round_trip("{}", &[]);
        round_trip("{ }", &[]);
        round_trip("{\r\n}", &[]);
        round_trip("{\r\n\t\"a\": [1, 2]\r\n}", &[]);
        // JSONC: comments and trailing commas.
        let added = round_trip(
            "// mine\n{\n  \"$schema\": \"x\", // the schema\n  \"mcp\": {\n    /* none yet */\n  },\n}\n",
            &["mcp"],
        );
        assert!(added.contains("/* none yet */"), "{added}");
        let added = round_trip("{\n  \"a\": 1, // one\n  \"b\": 2 // two\n}", &[]);
        assert!(added.contains("\"b\": 2, // two\n  \"bsi\""), "{added}");
        round_trip("{\n  \"a\": 1,\n  \"b\": 2,\n}", &[]);
        round_trip("{\"a\": 1 /* x */}", &[]);
    }

    #[test]
    fn an_item_added_to_a_list_comes_out_leaving_the_bytes() {
        for text in [
            "{\"l\": []}",
            "{\"l\": [1, 2]}",
            "{\n  \"l\": [\n    {\"a\": 1}, // one\n  ]\n}",
            "{\"l\": [\n]}",
        ] {
            let root = parse(text).expect("parses");
            let list = &root.member("l").expect("l").value;
            let added = push_item(text, list, &json!({"b": [true]}));
            let again = parse(&added).unwrap_or_else(|e| panic!("{e}\n{added}"));
            let list = &again.member("l").expect("l").value;
            let items = list.items().expect("list");
            assert_eq!(
                items.last().expect("item").value.to_value(),
                json!({"b": [true]})
            );
            assert_eq!(
                remove_member(&added, list, items.len() - 1),
                text,
                "{added}"
            );
        }
    }

    #[test]
    fn values_read_as_json_does() {
        let text = "{\"a\": [1, {\"b\": null}], \"c\": \"\\u00e9\", \"a\": true}";
        let root = parse(text).expect("parses");
        assert_eq!(root.member("a").expect("a").value.to_value(), json!(true));
        assert_eq!(root.member("c").expect("c").value.to_value(), json!("é"));
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "{\"a\": 1 \"b\": 2}",
            "[1 2]",
            "{} x",
            "/* x",
            "\"x",
            "{\"a\": tru}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(10_000);
        assert!(parse(&deep).is_err());
    }
}
