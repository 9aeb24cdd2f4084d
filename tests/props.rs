//! Property tests of the pure rules: scope overlap, the registry's
//! parse/render round trip, and shell words read back by real shells.
//! `PROPTEST_CASES=100000 cargo test --test props` is the long mode.

use bsi_core::markdown;
use bsi_core::registry::{self, Claim, HistoryEntry, TableKind, render::empty_registry};
use bsi_core::scope::{FlatSections, Scope, Sections, covers, overlaps};
use chrono::{DateTime, Duration, FixedOffset, TimeZone};
use proptest::prelude::*;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("ab".to_string()),
        Just("notes".to_string()),
        Just("é".to_string()),
        "[a-z]{1,3}",
    ]
}

fn path(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(name(), 1..=max)
}

fn scope() -> impl Strategy<Value = Scope> {
    prop_oneof![
        1 => Just(Scope::Global),
        3 => path(3).prop_map(|p| Scope::Dir(format!("{}/", p.join("/")))),
        3 => path(3).prop_map(|p| Scope::File(format!("{}.md", p.join("/")))),
        3 => (path(2), "[A-Ca-c]").prop_map(|(p, h)| Scope::Section { file: format!("{}.md", p.join("/")), heading: h }),
    ]
}

/// Heading tree used for section nesting: `A` contains `B`, `C` stands alone.
struct Tree;
impl Sections for Tree {
    fn contains(&self, _file: &str, outer: &str, inner: &str) -> bool {
        outer == "a" && inner == "b"
    }
}

proptest! {
    #[test]
    fn overlap_is_symmetric(a in scope(), b in scope()) {
        prop_assert_eq!(overlaps(&a, &b, &Tree), overlaps(&b, &a, &Tree));
        prop_assert_eq!(overlaps(&a, &b, &FlatSections), overlaps(&b, &a, &FlatSections));
    }

    #[test]
    fn global_overlaps_everything(a in scope()) {
        prop_assert!(overlaps(&Scope::Global, &a, &Tree));
    }

    #[test]
    fn a_scope_overlaps_itself(a in scope()) {
        prop_assert!(overlaps(&a, &a, &Tree));
        prop_assert!(covers(&a, &a, &Tree));
    }

    #[test]
    fn a_directory_overlaps_exactly_the_paths_under_it(d in path(2), p in path(4)) {
        let dir = Scope::Dir(format!("{}/", d.join("/")));
        let file = Scope::File(p.join("/"));
        let under = p.len() > d.len() && p[..d.len()] == d[..];
        // A file name above the directory: `a` may yet become a folder, and
        // a claim on it covers what is created under it.
        let above = d.len() > p.len() && d[..p.len()] == p[..];
        // `a` and `a/` are one name: whichever it turns out to be on disk.
        prop_assert_eq!(overlaps(&dir, &file, &Tree), under || p == d || above);
        prop_assert_eq!(covers(&file, &dir, &Tree), above || p == d);
        prop_assert_eq!(covers(&dir, &file, &Tree), under);
    }

    #[test]
    fn non_nested_sections_of_one_file_never_overlap(f in path(2), h1 in "[a-z]{1,6}", h2 in "[a-z]{1,6}") {
        prop_assume!(h1 != h2);
        let file = format!("{}.md", f.join("/"));
        let a = Scope::Section { file: file.clone(), heading: h1 };
        let b = Scope::Section { file, heading: h2 };
        prop_assert!(!overlaps(&a, &b, &FlatSections));
    }

    #[test]
    fn covered_implies_overlapping(a in scope(), b in scope()) {
        if covers(&a, &b, &Tree) {
            prop_assert!(overlaps(&a, &b, &Tree));
        }
    }

    #[test]
    fn stored_scopes_parse_back_to_themselves(a in scope()) {
        prop_assert_eq!(Scope::parse_stored(&a.to_string()), Ok(a));
    }
}

fn ts() -> impl Strategy<Value = DateTime<FixedOffset>> {
    (
        0i64..500_000,
        prop::sample::select(vec![0, 3600, -5 * 3600, 5 * 3600 + 1800]),
    )
        .prop_map(|(m, off)| {
            let o = FixedOffset::east_opt(off).expect("offset");
            o.timestamp_opt(1_773_000_000 + m * 60, 0)
                .single()
                .expect("time")
        })
}

/// Cell text, including the characters that need escaping.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-zA-Z0-9 ]{0,12}".prop_map(|s| s.trim().to_string()),
        "[a-z|\\\\é` ]{1,10}".prop_map(|s| s.trim().to_string()),
    ]
}

fn claim() -> impl Strategy<Value = Claim> {
    (
        "[a-z0-9-]{1,12}",
        scope(),
        cell(),
        ts(),
        1i64..=480,
        cell(),
        prop::option::of(cell()),
    )
        .prop_map(|(session, scope, agent, opened, ttl, note, reason)| Claim {
            session,
            scope,
            agent,
            opened,
            expires: opened + Duration::minutes(ttl),
            note,
            reason,
            extra: Vec::new(),
        })
}

fn dedup(claims: Vec<Claim>) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    for c in claims {
        if !out
            .iter()
            .any(|o| o.session == c.session && o.scope == c.scope)
        {
            out.push(c);
        }
    }
    out
}

proptest! {
    #[test]
    fn parse_render_round_trip(
        active in prop::collection::vec(claim(), 0..6),
        stale in prop::collection::vec(claim(), 0..6),
        history in prop::collection::vec((claim(), cell()), 0..6),
        crlf in any::<bool>(),
    ) {
        let all = dedup(active.into_iter().map(|c| (c, false)).chain(stale.into_iter().map(|c| (c, true)))
            .map(|(mut c, st)| { c.reason = if st { Some(c.reason.unwrap_or_default()) } else { None }; c.extra = vec![("stale".into(), st.to_string())]; c })
            .collect());
        let (stale, active): (Vec<Claim>, Vec<Claim>) = all.into_iter().partition(|c| c.extra[0].1 == "true");
        let strip = |mut c: Claim| { c.extra.clear(); c };
        let active: Vec<Claim> = active.into_iter().map(strip).collect();
        let stale: Vec<Claim> = stale.into_iter().map(strip).collect();

        let mut text = empty_registry();
        if crlf { text = text.replace('\n', "\r\n"); }
        let mut reg = registry::parse_in(text, &chrono::Utc).expect("empty registry parses");
        for c in &active { reg.add_claim(TableKind::Active, c); }
        for c in &stale { reg.add_claim(TableKind::Stale, c); }
        for (c, note) in &history {
            reg.add_history(&HistoryEntry::closing(c, c.expires, registry::Status::Completed, note));
        }
        let rendered = reg.render();
        let back = registry::parse_in(rendered.clone(), &chrono::Utc).expect("rendered registry parses");
        prop_assert_eq!(&back.active_claims, &active);
        prop_assert_eq!(&back.stale_claims, &stale);
        prop_assert_eq!(back.history_len(), history.len());
        // Rendering an unchanged registry gives the same bytes.
        prop_assert_eq!(back.render(), rendered.clone());
        if crlf { prop_assert!(!rendered.replace("\r\n", "").contains('\n')); }
        // History rows read back with their cells.
        let rows = registry::parse::history_rows(&back).expect("history rows");
        for (row, (c, _)) in rows.iter().zip(&history) {
            prop_assert_eq!(&row[0].1, &c.session);
            prop_assert_eq!(&row[1].1, &c.scope.to_string());
        }
    }

    #[test]
    fn removing_rows_keeps_every_other_byte(claims in prop::collection::vec(claim(), 1..8), pick in any::<prop::sample::Index>()) {
        let claims = dedup(claims);
        let mut reg = registry::parse_in(empty_registry(), &chrono::Utc).expect("parse");
        for c in &claims { reg.add_claim(TableKind::Active, c); }
        let full = reg.render();
        let mut reg = registry::parse_in(full.clone(), &chrono::Utc).expect("parse");
        let i = pick.index(claims.len());
        reg.remove_claim(TableKind::Active, i);
        let less = reg.render();
        let row_line = full.lines().filter(|l| l.starts_with("| ")).nth(1 + i).expect("row").to_string() + "\n";
        prop_assert_eq!(less.len() + row_line.len(), full.len());
        prop_assert_eq!(full.replacen(&row_line, "", 1), less);
    }

    #[test]
    fn the_parser_never_panics(text in "(#{0,3} ?[A-Za-z|:\\-\\\\ ]{0,20}\r?\n){0,30}") {
        let _ = registry::parse_in(text.clone(), &chrono::Utc);
        let _ = markdown::outline(&text);
    }

    #[test]
    fn mutated_registries_parse_or_fail_without_panicking(
        claims in prop::collection::vec(claim(), 0..5),
        cut in any::<prop::sample::Index>(),
        insert in "[|\\-#\n\\\\a ]{0,6}",
    ) {
        let mut reg = registry::parse_in(empty_registry(), &chrono::Utc).expect("parse");
        for c in dedup(claims) { reg.add_claim(TableKind::Active, &c); }
        let text = reg.render();
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) { at -= 1; }
        let mutated = format!("{}{}{}", &text[..at], insert, &text[at..]);
        if let Ok(r) = registry::parse_in(mutated.clone(), &chrono::Utc) {
            // Whatever parses renders back to exactly the same bytes.
            prop_assert_eq!(r.render(), mutated);
        }
    }
}

/// Prose that may sit between and around the tables.
fn prose() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("Some words.\n\n".to_string()),
        Just("```\n| not | a table |\n|---|---|\n```\n\n".to_string()),
        Just("> quoted\n\n".to_string()),
        Just("<!-- comment -->\n\n".to_string()),
        Just("- item\n- item\n\n".to_string()),
    ]
}

proptest! {
    /// The registry's line scanner finds the same tables, with the same
    /// number of rows, as pulldown-cmark's GFM table parser.
    #[test]
    fn scanner_agrees_with_pulldown_cmark(
        claims in prop::collection::vec(claim(), 0..5),
        hist in prop::collection::vec(claim(), 0..5),
        before in prose(),
        between in prose(),
        after in prose(),
    ) {
        let base = empty_registry()
            .replace("## Claims stale", &format!("{between}## Claims stale"))
            .replacen("## Claims actifs", &format!("{before}## Claims actifs"), 1)
            + "\n" + &after;
        let mut reg = registry::parse_in(base, &chrono::Utc).expect("parse");
        for c in dedup(claims) { reg.add_claim(TableKind::Active, &c); }
        for c in &hist { reg.add_history(&HistoryEntry::closing(c, c.expires, registry::Status::Released, "")); }
        let text = reg.render();
        let ours = registry::parse_in(text.clone(), &chrono::Utc).expect("parse");
        let theirs = markdown::tables_by_heading(&text);
        let expect: Vec<(String, usize)> = [TableKind::Active, TableKind::Stale, TableKind::History]
            .iter()
            .map(|k| (k.heading().to_string(), ours.table(*k).rows.len()))
            .collect();
        prop_assert_eq!(theirs, expect);
    }
}

proptest! {
    /// Found by fuzzing: a file whose last row has no line ending. Removing
    /// rows and appending others keeps every row in its table.
    #[test]
    fn edits_of_an_unterminated_last_table_stay_in_the_table(
        claims in prop::collection::vec(claim(), 1..6),
        added in claim(),
        remove in prop::collection::vec(any::<bool>(), 6),
        crlf in any::<bool>(),
    ) {
        let claims: Vec<Claim> = dedup(claims)
            .into_iter()
            .map(|mut c| { c.reason = Some(c.reason.unwrap_or_default()); c })
            .collect();
        // The stale table is made the last thing in the file.
        let mut text = empty_registry();
        let hist = text.find("## Historique").expect("history");
        let stale = text.find("## Claims stale").expect("stale");
        let history = text[hist..].to_string();
        text = format!("{}{}\n{}", &text[..stale], history, &text[stale..hist]);
        let mut reg = registry::parse_in(text, &chrono::Utc).expect("parse");
        for c in &claims { reg.add_claim(TableKind::Stale, c); }
        let mut full = reg.render().trim_end().to_string();
        if crlf { full = full.replace('\n', "\r\n"); }
        let reg = registry::parse_in(full.clone(), &chrono::Utc).expect("unterminated parses");
        prop_assert_eq!(&reg.stale_claims, &claims);
        let mut edited = reg.clone();
        let mut expect: Vec<Claim> = Vec::new();
        for (i, c) in claims.iter().enumerate() {
            if remove[i] { edited.remove_claim(TableKind::Stale, i); } else { expect.push(c.clone()); }
        }
        let fresh = Claim { session: "zz-added".into(), reason: Some(String::new()), ..added };
        edited.add_claim(TableKind::Stale, &fresh);
        expect.push(fresh);
        let out = edited.render();
        let back = registry::parse_in(out.clone(), &chrono::Utc).expect("edited parses");
        prop_assert_eq!(&back.stale_claims, &expect);
        prop_assert!(!out.ends_with('\n'));
    }
}

/// One line of a generated markdown file. Every line is unique (its id is
/// written into it), so the shortest edit script between two versions is
/// the one the edit made: the expected answer does not depend on a diff.
#[derive(Debug, Clone)]
enum Md {
    Text,
    Blank,
    Atx(usize, usize),
    Setext(bool),
    Fence,
}

const NAMES: [&str; 4] = ["Goals", "Risks", "Notes", "Q1"];

fn md_line() -> impl Strategy<Value = Md> {
    prop_oneof![
        4 => Just(Md::Text),
        3 => Just(Md::Blank),
        4 => (1..=3usize, 0..NAMES.len()).prop_map(|(l, n)| Md::Atx(l, n)),
        1 => any::<bool>().prop_map(Md::Setext),
        1 => Just(Md::Fence),
    ]
}

fn render_line(l: &Md, id: usize) -> String {
    match l {
        Md::Text => format!("text {id}\n"),
        Md::Blank => format!("{}\n", " ".repeat(id)),
        Md::Atx(level, n) => format!("{} {} <!--{id}-->\n", "#".repeat(*level), NAMES[*n]),
        Md::Setext(eq) => format!("{}\n", if *eq { "=" } else { "-" }.repeat(3 + id)),
        Md::Fence => format!("{}\n", "~".repeat(3 + id)),
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Keep,
    Delete,
    Replace(Md),
    InsertBefore(Md),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        6 => Just(Edit::Keep),
        2 => Just(Edit::Delete),
        2 => md_line().prop_map(Edit::Replace),
        2 => md_line().prop_map(Edit::InsertBefore),
    ]
}

/// For each line (0-based), the keys of the headings holding it, computed
/// with a stack walk over the heading list: independent of how
/// `bsi_core::changes` finds sections. `None`: before the first heading.
fn chains(text: &str, n: usize) -> Vec<Option<Vec<String>>> {
    let o = markdown::outline(text);
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut hs = o.headings.iter().peekable();
    let mut out = Vec::with_capacity(n);
    let mut seen_heading = false;
    for line in 1..=n {
        while let Some(h) = hs.next_if(|h| h.line <= line) {
            while stack.last().is_some_and(|(l, _)| *l >= h.level) {
                stack.pop();
            }
            stack.push((h.level, h.key.clone()));
            seen_heading = true;
        }
        out.push(seen_heading.then(|| stack.iter().rev().map(|(_, k)| k.clone()).collect()));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The sections `changes::text_change` says an edit touches are those
    /// computed from the old and new heading trees: removed lines in the
    /// old tree, added lines in the new, kept lines whose headings changed
    /// in both (what they left and what they joined); the preamble belongs
    /// to no section.
    #[test]
    fn touched_sections_match_the_heading_trees(
        old in prop::collection::vec(md_line(), 0..40),
        edits in prop::collection::vec(edit(), 40),
        tail in prop::collection::vec(md_line(), 0..4),
    ) {
        let mut id = 1;
        let mut fresh = |l: &Md| { id += 1; render_line(l, id) };
        let old_lines: Vec<String> = old.iter().map(&mut fresh).collect();
        let mut new_lines: Vec<String> = Vec::new();
        // (old index or None, new index or None) per line of the script.
        let mut kept: Vec<(usize, usize)> = Vec::new();
        let mut removed: Vec<usize> = Vec::new();
        let mut added: Vec<usize> = Vec::new();
        for (i, line) in old_lines.iter().enumerate() {
            match &edits[i] {
                Edit::Keep => { kept.push((i, new_lines.len())); new_lines.push(line.clone()); }
                Edit::Delete => removed.push(i),
                Edit::Replace(l) => { removed.push(i); added.push(new_lines.len()); new_lines.push(fresh(l)); }
                Edit::InsertBefore(l) => {
                    added.push(new_lines.len()); new_lines.push(fresh(l));
                    kept.push((i, new_lines.len())); new_lines.push(line.clone());
                }
            }
        }
        for l in &tail { added.push(new_lines.len()); new_lines.push(fresh(l)); }
        let old_text = old_lines.concat();
        let new_text = new_lines.concat();
        let oc = chains(&old_text, old_lines.len());
        let nc = chains(&new_text, new_lines.len());

        let mut expected: std::collections::BTreeSet<String> = std::collections::BTreeSet::default();
        let mut preamble = false;
        for &i in &removed {
            match &oc[i] { Some(c) => expected.extend(c.iter().cloned()), None => preamble = true }
        }
        for &j in &added {
            match &nc[j] { Some(c) => expected.extend(c.iter().cloned()), None => preamble = true }
        }
        for &(i, j) in &kept {
            match (&oc[i], &nc[j]) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    expected.extend(a.iter().filter(|k| !b.contains(k)).cloned());
                    expected.extend(b.iter().filter(|k| !a.contains(k)).cloned());
                }
                (Some(c), None) | (None, Some(c)) => { preamble = true; expected.extend(c.iter().cloned()); }
            }
        }
        let change = bsi_core::changes::text_change(&old_text, &new_text);
        let got: std::collections::BTreeSet<String> = change.keys().into_iter().collect();
        prop_assert_eq!(&got, &expected, "old:\n{}\nnew:\n{}", old_text, new_text);
        prop_assert_eq!(change.touched.iter().any(bsi_core::changes::Touched::in_preamble), preamble, "old:\n{}\nnew:\n{}", old_text, new_text);
        // Every touched run lies inside its version.
        for t in &change.touched {
            let n = match t.side { bsi_core::changes::Side::Old => old_lines.len(), bsi_core::changes::Side::New => new_lines.len() };
            prop_assert!(1 <= t.start && t.start <= t.end && t.end <= n, "{:?}", t);
        }
    }
}

proptest! {
    /// Any two texts, markdown or not: an answer, never a panic, and no
    /// change means nothing touched.
    #[test]
    fn text_change_takes_any_text(a in "([#=~ -]{0,3}[a-z\r]{0,4}\n?){0,20}", b in "([#=~ -]{0,3}[a-z\r]{0,4}\n?){0,20}") {
        let c = bsi_core::changes::text_change(&a, &b);
        prop_assert_eq!(c.touched.is_empty(), a == b);
        prop_assert!(bsi_core::changes::text_change(&a, &a).touched.is_empty());
    }
}

proptest! {
    /// The timestamps bsi writes read back to the same minute, whatever the
    /// offset (the hand-written fast path and chrono agree).
    #[test]
    fn written_timestamps_read_back(t in ts(), off in -14i32 * 60..=14 * 60) {
        let o = FixedOffset::east_opt(off * 60).expect("offset");
        let t = t.with_timezone(&o);
        let written = bsi_core::ttl::format_ts(t);
        prop_assert_eq!(bsi_core::ttl::parse_ts(&written, &chrono::Utc), Some(t));
        prop_assert_eq!(
            bsi_core::ttl::parse_ts(&written, &chrono::Utc),
            DateTime::parse_from_str(&written, "%Y-%m-%d %H:%M %:z").ok()
        );
    }
}

/// A piece of a scope a shell would read if it were written bare.
fn shell_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9/._-]{0,6}",
        prop::sample::select(vec![
            " ",
            "  ",
            "#",
            "$(touch X)",
            "`touch X`",
            "${HOME}",
            "$1",
            "'",
            "''",
            "\"",
            "\\",
            "\\'",
            "\n",
            "\t",
            "!",
            "!!",
            "*",
            "?",
            "[a]",
            "{a,b}",
            "~",
            "^",
            "=",
            "==ls",
            "%",
            ";",
            "&",
            "|",
            "<",
            ">",
            "(",
            ")",
            "é",
            "日本",
            "\u{a0}",
            "-",
            "--x",
        ])
        .prop_map(str::to_string),
        any::<char>().prop_map(String::from),
    ]
}

/// Scopes as they come: any unicode (NUL aside: no argument can hold it),
/// and section scopes made of the characters shells read.
fn any_scope_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(shell_piece(), 0..8).prop_map(|p| p.concat()),
        (
            "[a-z]{1,4}(/[a-z]{1,4}){0,2}\\.md",
            prop::collection::vec(shell_piece(), 1..6)
        )
            .prop_map(|(file, heading)| format!("{file}#{}", heading.concat())),
    ]
    .prop_map(|s| s.replace('\0', ""))
}

/// The shells a pasted command may meet, each with the options that change
/// how a word is read: sh, bash with extglob, zsh with extended_glob (where
/// `#`, `^`, `~` are operators), ksh_glob, magic_equal_subst and rc_quotes.
/// A shell that is not installed is left out (CI installs zsh).
fn shells() -> &'static [Vec<&'static str>] {
    static SHELLS: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();
    SHELLS.get_or_init(|| {
        let candidates: Vec<Vec<&'static str>> = vec![
            vec!["sh"],
            vec!["bash", "-O", "extglob"],
            vec![
                "zsh",
                "-f",
                "-o",
                "extendedglob",
                "-o",
                "kshglob",
                "-o",
                "magicequalsubst",
                "-o",
                "rcquotes",
            ],
        ];
        let present: Vec<Vec<&'static str>> = candidates
            .into_iter()
            .filter(|c| {
                std::process::Command::new(c[0])
                    .args(["-c", "true"])
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .collect();
        assert!(
            present.first().is_some_and(|s| s[0] == "sh"),
            "no sh to run the words through"
        );
        present
    })
}

/// 64 cases of a few scopes each (a shell started per case and shell);
/// `PROPTEST_CASES` still sets the long mode.
fn shell_cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(64);
    ProptestConfig::with_cases(cases)
}

proptest! {
    #![proptest_config(shell_cases())]

    /// A scope written with `shell_word`, in a command line a shell reads
    /// as text, reaches the command as one argument, byte for byte, and
    /// runs nothing (the shell works in an empty directory that stays so).
    #[test]
    fn a_shell_word_reaches_the_command_as_it_was(scopes in prop::collection::vec(any_scope_text(), 1..5)) {
        let script = bsi_core::words::command_line(
            ["printf", "%s\\0"].into_iter().chain(scopes.iter().map(String::as_str)),
        );
        let dir = tempfile::tempdir().expect("tempdir");
        for shell in shells() {
            let out = std::process::Command::new(shell[0])
                .args(&shell[1..])
                .arg("-c")
                .arg(&script)
                .current_dir(dir.path())
                .env("LC_ALL", "C.UTF-8")
                .output()
                .expect("run the shell");
            prop_assert!(out.status.success(), "{shell:?} failed on {script:?}: {}", String::from_utf8_lossy(&out.stderr));
            let args: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
            let want: Vec<&[u8]> = scopes.iter().map(String::as_bytes).chain([&b""[..]]).collect();
            prop_assert_eq!(args, want, "{:?} read {:?}", shell, script);
            prop_assert!(
                std::fs::read_dir(dir.path()).expect("read dir").next().is_none(),
                "{:?} ran something in {:?}", shell, script
            );
        }
    }
}

/// Two machines sharing a remote, each going offline and back, doing what
/// bsi's commands do to the registry: the merges of their registries must
/// never drop a claim, never bring a closed claim back and never leave two
/// endings for one claim.
mod machines {
    use std::collections::{HashMap, HashSet};

    use bsi_core::registry::merge::{Merged, merge3};
    use bsi_core::registry::{
        self, Claim, HistoryEntry, Registry, Status, TableKind, render::empty_registry,
    };
    use bsi_core::scope::Scope;
    use chrono::{DateTime, Duration, FixedOffset};
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    pub(super) enum Act {
        /// A new session claims file `f{n}.md` for `h` hours.
        Open(u8, i64),
        /// Renews the n-th claim for `h` hours.
        Renew(usize, i64),
        /// Its session closes the n-th claim (active or stale).
        Close(usize),
        Watchdog,
        /// A person releases the n-th stale claim.
        Release(usize),
        /// A person force-releases the n-th active claim.
        ForceRelease(usize),
        /// Publishes what is pending.
        Sync,
        Offline,
        Online,
    }

    pub(super) fn act() -> impl Strategy<Value = Act> {
        prop_oneof![
            3 => (0u8..4, 1i64..=3).prop_map(|(f, h)| Act::Open(f, h)),
            3 => (0usize..6, 1i64..=5).prop_map(|(i, h)| Act::Renew(i, h)),
            2 => (0usize..6).prop_map(Act::Close),
            2 => Just(Act::Watchdog),
            1 => (0usize..6).prop_map(Act::Release),
            1 => (0usize..6).prop_map(Act::ForceRelease),
            1 => Just(Act::Sync),
            2 => Just(Act::Offline),
            2 => Just(Act::Online),
        ]
    }

    fn t0() -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339("2026-03-14T08:00:00Z").expect("time")
    }

    fn parse(text: &str) -> Registry {
        registry::parse_in(text.to_string(), &chrono::Utc).expect("a registry")
    }

    /// What a command makes of `text` at `now`; `None` when it writes nothing.
    fn apply(text: &str, act: &Act, now: DateTime<FixedOffset>, serial: usize) -> Option<String> {
        let reg = parse(text);
        let mut e = reg.clone();
        let ending = |c: &Claim, status| HistoryEntry::closing(c, now, status, "");
        match *act {
            Act::Open(f, h) => {
                let opened = bsi_core::ttl::to_minute(now);
                e.add_claim(
                    TableKind::Active,
                    &Claim {
                        session: format!("s{serial}"),
                        scope: Scope::File(format!("f{f}.md")),
                        agent: "a".into(),
                        opened,
                        expires: bsi_core::ttl::expiry(opened, Duration::hours(h)),
                        note: String::new(),
                        reason: None,
                        extra: Vec::new(),
                    },
                );
            }
            Act::Renew(i, h) if !reg.active_claims.is_empty() => {
                let i = i % reg.active_claims.len();
                let c = &reg.active_claims[i];
                if bsi_core::ttl::stale_reason(c.opened, c.expires, now).is_some() {
                    return None; // overdue: refused
                }
                let expires = bsi_core::ttl::renewed_expiry(c.opened, now, Duration::hours(h));
                if expires <= c.expires {
                    return None;
                }
                let mut n = c.clone();
                n.expires = expires;
                e.replace_claim(TableKind::Active, i, &n);
            }
            Act::Close(i) => {
                let all: Vec<(Claim, bool)> =
                    reg.all_claims().map(|(c, s)| (c.clone(), s)).collect();
                if all.is_empty() {
                    return None;
                }
                let (c, stale) = &all[i % all.len()];
                let (kind, list) = if *stale {
                    (TableKind::Stale, &reg.stale_claims)
                } else {
                    (TableKind::Active, &reg.active_claims)
                };
                let at = list.iter().position(|x| x == c).expect("row");
                e.remove_claim(kind, at);
                e.add_history(&ending(c, Status::Completed));
            }
            Act::Watchdog => {
                let mut moved = false;
                for (i, c) in reg.active_claims.iter().enumerate() {
                    if let Some(reason) = bsi_core::ttl::stale_reason(c.opened, c.expires, now) {
                        let mut s = c.clone();
                        s.reason = Some(reason.to_string());
                        e.remove_claim(TableKind::Active, i);
                        e.add_claim(TableKind::Stale, &s);
                        moved = true;
                    }
                }
                if !moved {
                    return None;
                }
            }
            Act::Release(i) if !reg.stale_claims.is_empty() => {
                let i = i % reg.stale_claims.len();
                e.remove_claim(TableKind::Stale, i);
                e.add_history(&ending(&reg.stale_claims[i], Status::Released));
            }
            Act::ForceRelease(i) if !reg.active_claims.is_empty() => {
                let i = i % reg.active_claims.len();
                e.remove_claim(TableKind::Active, i);
                e.add_history(&ending(&reg.active_claims[i], Status::ForceReleased));
            }
            _ => return None,
        }
        Some(e.render())
    }

    /// A claim's identity: session, scope, opening.
    type Id = (String, String, String);

    /// The claims of a registry, and its endings (by claim, with the row).
    fn facts(text: &str) -> (HashSet<Id>, Vec<(Id, String)>) {
        let reg = parse(text);
        let claims = reg
            .all_claims()
            .map(|(c, _)| {
                (
                    c.session.clone(),
                    c.scope.to_string(),
                    bsi_core::ttl::format_ts(c.opened),
                )
            })
            .collect();
        let endings = registry::parse::history_rows(&reg)
            .expect("history rows")
            .into_iter()
            .map(|cells| {
                let get = |name: &str| {
                    cells
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                let row: Vec<String> = cells.iter().map(|(_, v)| v.clone()).collect();
                ((get("Session"), get("Scope"), get("Ouvert")), row.join("|"))
            })
            .collect();
        (claims, endings)
    }

    /// The expiry of every claim, by identity, and whether it is stale.
    fn expiries(text: &str) -> HashMap<Id, (DateTime<FixedOffset>, bool)> {
        parse(text)
            .all_claims()
            .map(|(c, stale)| {
                let id = (
                    c.session.clone(),
                    c.scope.to_string(),
                    bsi_core::ttl::format_ts(c.opened),
                );
                (id, (c.expires, stale))
            })
            .collect()
    }

    /// The rules, for one merge of `ours` and `theirs` at `now`.
    fn check(
        ours: &str,
        theirs: &str,
        m: &Merged,
        now: DateTime<FixedOffset>,
    ) -> Result<(), TestCaseError> {
        // A later fact wins: no claim's expiry goes back, and a claim is
        // stale only once its expiry has passed.
        let merged = expiries(&m.text);
        for (id, (expires, stale)) in &merged {
            for side in [ours, theirs] {
                if let Some((e, _)) = expiries(side).get(id) {
                    prop_assert!(expires >= e, "{id:?} lost a renewal:\n{}", m.text);
                }
            }
            if *stale {
                let opened = DateTime::parse_from_str(&id.2, "%Y-%m-%d %H:%M %:z").expect("time");
                prop_assert!(
                    bsi_core::ttl::stale_reason(opened, *expires, now).is_some(),
                    "{id:?} is stale before its expiry:\n{}",
                    m.text
                );
            }
        }
        let (mc, me) = facts(&m.text);
        let ended_in_merge: HashSet<&Id> = me.iter().map(|(id, _)| id).collect();
        let merged_rows: HashSet<&String> = me.iter().map(|(_, r)| r).collect();
        let mut per_claim: HashMap<&Id, usize> = HashMap::new();
        for (id, _) in &me {
            *per_claim.entry(id).or_default() += 1;
        }
        for (id, n) in per_claim {
            prop_assert!(n == 1, "{id:?} ends {n} times:\n{}", m.text);
        }
        for (side, text) in [("ours", ours), ("theirs", theirs)] {
            let (claims, endings) = facts(text);
            for id in &claims {
                prop_assert!(
                    mc.contains(id) || ended_in_merge.contains(id),
                    "{side}'s claim {id:?} is gone:\n{}",
                    m.text
                );
            }
            for (id, row) in &endings {
                prop_assert!(
                    !mc.contains(id),
                    "{id:?} closed on {side} is back:\n{}",
                    m.text
                );
                let reported = side == "ours"
                    && m.superseded
                        .iter()
                        .any(|s| s.session == id.0 && s.scope == id.1);
                prop_assert!(
                    merged_rows.contains(row) || reported,
                    "{side}'s history row {row} is gone unreported:\n{}",
                    m.text
                );
            }
        }
        Ok(())
    }

    struct Machine {
        online: bool,
        /// The remote's commit last fetched (an index into its history).
        tracking: usize,
        /// Changes recorded offline: the remote commit they fork from, and
        /// the local registry.
        pending: Option<(usize, String)>,
    }

    /// Runs the acts of both machines; every union read is checked.
    pub(super) fn play(acts: &[(bool, Act, i64)]) -> Result<(), TestCaseError> {
        let mut remote: Vec<String> = vec![empty_registry()];
        let mut ms = [0, 1].map(|_| Machine {
            online: true,
            tracking: 0,
            pending: None,
        });
        let mut now = t0();
        let view = |m: &Machine, remote: &[String], now| -> Result<String, TestCaseError> {
            match &m.pending {
                None => Ok(remote[m.tracking].clone()),
                Some((fork, local)) => {
                    let (b, o, t) = (
                        parse(&remote[*fork]),
                        parse(local),
                        parse(&remote[m.tracking]),
                    );
                    let merged = merge3(Some(&b), &o, &t, now).expect("merge");
                    check(local, &remote[m.tracking], &merged, now)?;
                    Ok(merged.text)
                }
            }
        };
        let all = acts
            .iter()
            .cloned()
            .chain([(false, Act::Online, 1), (true, Act::Online, 1)])
            .chain([
                (false, Act::Sync, 1),
                (true, Act::Sync, 1),
                (false, Act::Sync, 1),
            ]);
        for (serial, (which, act, minutes)) in all.enumerate() {
            now += Duration::minutes(minutes);
            let m = &mut ms[usize::from(which)];
            match act {
                Act::Offline => m.online = false,
                Act::Online => m.online = true,
                _ => {}
            }
            if m.online {
                m.tracking = remote.len() - 1;
            }
            let seen = view(m, &remote, now)?;
            let new = apply(&seen, &act, now, serial);
            match (m.online, new) {
                (true, new) if new.is_some() || m.pending.is_some() => {
                    remote.push(new.unwrap_or(seen));
                    m.tracking = remote.len() - 1;
                    m.pending = None;
                }
                (false, Some(new)) => {
                    let fork = m.pending.as_ref().map_or(m.tracking, |p| p.0);
                    m.pending = Some((fork, new));
                }
                _ => {}
            }
            // What everyone shares holds no claim twice ended, nor one
            // ended and still held.
            let (claims, endings) = facts(remote.last().expect("a tip"));
            let mut ended = HashSet::new();
            for (id, _) in &endings {
                prop_assert!(ended.insert(id.clone()), "{id:?} ends twice on the remote");
                prop_assert!(!claims.contains(id), "{id:?} ended and held on the remote");
            }
        }
        // Both synced: one registry.
        for m in &ms {
            prop_assert!(m.pending.is_none());
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn merges_of_two_machines_keep_every_claim_and_end_each_once(
        acts in prop::collection::vec((any::<bool>(), machines::act(), 1i64..=120), 1..40),
    ) {
        machines::play(&acts)?;
    }
}

/// A plan with three sections, each body one of a few lines.
fn plan_of(bodies: &[u8; 3]) -> String {
    let mut s = String::from("# Plan\n\n");
    for (k, b) in ["A", "B", "C"].iter().zip(bodies) {
        s.push_str(&format!("## {k}\n\n{k} body {b}\n\n"));
    }
    s
}

/// How one section of a merge's result is chosen.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Base,
    Ours,
    Theirs,
    Fresh,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The sections `guard::merge` says a merge changed of its own are
    /// those git's three-way rule names, section by section: a result that
    /// differs from the first parent and is not exactly what the other
    /// parent changed the section to, or a result that keeps the first
    /// parent's section where the other parent changed it otherwise.
    #[test]
    fn a_merge_changes_what_the_three_way_rule_says(
        ours_changed in prop::array::uniform3(any::<bool>()),
        theirs_changed in prop::array::uniform3(any::<bool>()),
        picks in prop::array::uniform3(prop_oneof![
            Just(Pick::Base), Just(Pick::Ours), Just(Pick::Theirs), Just(Pick::Fresh)
        ]),
    ) {
        use bsi_core::guard::merge::{Other, changes_file, text_change_of_merge};
        let base = [0u8; 3];
        let mut ours = base;
        let mut theirs = base;
        let mut result = base;
        for k in 0..3 {
            if ours_changed[k] { ours[k] = 1; }
            if theirs_changed[k] { theirs[k] = 2; }
            result[k] = match picks[k] {
                Pick::Base => base[k],
                Pick::Ours => ours[k],
                Pick::Theirs => theirs[k],
                Pick::Fresh => 3,
            };
        }
        let mut expected: Vec<String> = Vec::new();
        for (k, key) in ["a", "b", "c"].iter().enumerate() {
            // Keeping the first parent's section where the other parent
            // changed it to something else takes that change away, whether
            // the first parent changed it too (`-s ours`, `-X ours`) or not.
            let mergers = if result[k] == ours[k] {
                theirs[k] != base[k] && theirs[k] != ours[k]
            } else {
                !(theirs[k] != base[k] && result[k] == theirs[k])
            };
            if mergers { expected.push((*key).to_string()); }
            // The same rule on whole versions.
            prop_assert_eq!(
                changes_file(&ours[k], &[Other { base: base[k], theirs: theirs[k] }], &result[k]),
                mergers
            );
        }
        let (b, o, t, r) = (plan_of(&base), plan_of(&ours), plan_of(&theirs), plan_of(&result));
        let change = text_change_of_merge(&o, &[Other { base: b.as_str(), theirs: t.as_str() }], &r);
        let got: Vec<String> = change
            .as_ref()
            .map(|c| c.keys().into_iter().filter(|k| k != "plan").collect())
            .unwrap_or_default();
        prop_assert_eq!(&got, &expected, "ours {:?} theirs {:?} result {:?}", ours, theirs, result);
        prop_assert_eq!(change.is_none(), expected.is_empty());
    }
}

// --- the one decision on an edit ------------------------------------------

/// The paths the edit properties act on; `BRAIN-INDEX.md` is the copy.
const EDITED: [&str; 5] = ["a.md", "b.md", "d/c.md", "d/e.md", "BRAIN-INDEX.md"];

fn edit_claim() -> impl Strategy<Value = (Claim, bool)> {
    let scope = prop_oneof![
        1 => Just(Scope::Global),
        2 => Just(Scope::Dir("d/".into())),
        4 => prop::sample::select(&EDITED[..4]).prop_map(|f| Scope::File(f.into())),
        3 => (prop::sample::select(&EDITED[..4]), "[AB]").prop_map(|(f, h)| Scope::Section { file: f.into(), heading: h }),
    ];
    (
        prop::sample::select(vec!["s1", "s2", "s3"]),
        scope,
        any::<bool>(),
    )
        .prop_map(|(session, scope, stale)| {
            let opened = DateTime::parse_from_rfc3339("2026-03-14T09:30:00Z").expect("time");
            let claim = Claim {
                session: session.into(),
                scope,
                agent: format!("agent-{session}"),
                opened,
                expires: opened + Duration::hours(2),
                note: String::new(),
                reason: None,
                extra: Vec::new(),
            };
            (claim, stale)
        })
}

fn edit_registry(claims: &[(Claim, bool)]) -> registry::Registry {
    let mut reg = registry::parse_in(empty_registry(), &chrono::Utc).expect("parse");
    let mut seen: Vec<(String, Scope)> = Vec::new();
    for (c, stale) in claims {
        if seen.contains(&(c.session.clone(), c.scope.clone())) {
            continue;
        }
        seen.push((c.session.clone(), c.scope.clone()));
        let kind = if *stale {
            TableKind::Stale
        } else {
            TableKind::Active
        };
        reg.add_claim(kind, c);
    }
    reg
}

fn hook_mode() -> impl Strategy<Value = bsi_core::config::HookMode> {
    use bsi_core::config::HookMode;
    prop::sample::select(vec![
        HookMode::Off,
        HookMode::Warn,
        HookMode::Normal,
        HookMode::Strict,
    ])
}

const EDIT_DOC: &str = "# T\n\n## A\n\na\n\n## B\n\nb\n";

/// A target: judged whole, or one section's line changed.
fn edit_target() -> impl Strategy<Value = bsi_core::guard::edit::Target> {
    use bsi_core::guard::edit::Target;
    (prop::sample::select(&EDITED[..]), 0u8..3).prop_map(|(rel, how)| match how {
        0 => Target::whole(rel),
        n => Target {
            old: Some(EDIT_DOC.into()),
            new: Some(EDIT_DOC.replace(if n == 1 { "\na\n" } else { "\nb\n" }, "\nchanged\n")),
            replace: true,
            ..Target::whole(rel)
        },
    })
}

proptest! {
    #[test]
    fn one_edit_decision_follows_the_mode(
        claims in prop::collection::vec(edit_claim(), 0..6),
        targets in prop::collection::vec(edit_target(), 1..4),
        session in prop::sample::select(vec![Some("s1"), Some("s2"), None]),
        mode in hook_mode(),
        claim_on_write in any::<bool>(),
    ) {
        use bsi_core::config::HookMode;
        use bsi_core::guard::edit::{EditDecision, Rules, decide};
        let reg = edit_registry(&claims);
        let rules = Rules {
            mode,
            claim_on_write,
            ttl: Duration::minutes(95),
            copy: "BRAIN-INDEX.md".into(),
            markdown: Vec::new(),
        };
        let d = decide(&reg, session, &targets, &rules);
        let copy = targets.iter().any(|t| t.rel == "BRAIN-INDEX.md");
        // Another session's claim (active or stale) over a target judged
        // whole: the oracle is the overlap rule itself.
        let theirs_whole = targets.iter().filter(|t| t.old.is_none()).any(|t| {
            reg.all_claims().any(|(c, _)| {
                Some(c.session.as_str()) != session
                    && overlaps(&c.scope, &Scope::File(t.rel.clone()), &FlatSections)
            })
        });
        match mode {
            HookMode::Off => prop_assert_eq!(&d, &EditDecision::Allow),
            // Warn mode never refuses; it speaks of the copy and of what
            // others hold.
            HookMode::Warn => {
                let refused = matches!(d, EditDecision::Deny { .. });
                prop_assert!(!refused, "{:?}", d);
                if copy || theirs_whole {
                    let warned = matches!(d, EditDecision::Warn { .. });
                    prop_assert!(warned, "{:?}", d);
                }
            }
            HookMode::Normal | HookMode::Strict => {
                if copy {
                    let copy_refused = matches!(d, EditDecision::Deny { copy: Some(_), .. });
                    prop_assert!(copy_refused, "{:?}", d);
                }
                if theirs_whole {
                    let refused = matches!(d, EditDecision::Deny { .. });
                    prop_assert!(refused, "an edit over another session's claim let through: {:?}", d);
                }
                let warned = matches!(d, EditDecision::Warn { .. });
                prop_assert!(!warned, "{:?}", d);
            }
        }
        if let EditDecision::ClaimFirst { scopes, ttl, .. } = &d {
            // Only for a known session, with the rules' TTL, and never
            // what another session holds.
            prop_assert!(claim_on_write && session.is_some());
            prop_assert_eq!(*ttl, Duration::minutes(95));
            prop_assert!(!copy);
            for s in scopes {
                let covered = reg.all_claims().any(|(c, _)| {
                    Some(c.session.as_str()) != session && overlaps(&c.scope, s, &FlatSections)
                });
                prop_assert!(!covered, "claims {} over another's claim: {:?}", s, reg.all_claims().collect::<Vec<_>>());
            }
        }
    }
}

// --- drift: a claimed part changed by a commit that is not its holder's ---

/// A commit of the content branch: its author session (one of the claims'
/// sessions, another, or none), its time around the claims', and the
/// claims it touched (indexes, some past the end).
fn landed(claims: usize) -> impl Strategy<Value = bsi_core::drift::Landed> {
    (
        prop::option::of(prop::sample::select(vec!["s0", "s1", "s2", "x"])),
        -600i64..600_000 * 60,
        prop::collection::vec(0..claims + 2, 0..4),
    )
        .prop_map(|(session, dt, touched)| bsi_core::drift::Landed {
            id: format!("{:040x}", dt.unsigned_abs()),
            author: "a <a@b>".into(),
            session: session.map(String::from),
            time: 1_773_000_000 + dt,
            touched: touched
                .into_iter()
                .map(|claim| bsi_core::drift::Touch {
                    claim,
                    path: "f.md".into(),
                    region: None,
                })
                .collect(),
        })
}

fn held_claim() -> impl Strategy<Value = Claim> {
    (claim(), prop::sample::select(vec!["s0", "s1", "s2"])).prop_map(|(mut c, s)| {
        c.session = s.to_string();
        c
    })
}

/// The record of `claims` each granted by a registry commit of its own
/// `opened` second (in that order), none ended.
fn granted(claims: &[Claim]) -> bsi_core::holdings::Holdings {
    use bsi_core::holdings::Version;
    let mut sorted: Vec<&Claim> = claims.iter().collect();
    sorted.sort_by_key(|c| c.opened.timestamp());
    let mut versions = vec![Version {
        id: "root".into(),
        time: 0,
        parents: Vec::new(),
        held: Vec::new(),
    }];
    let mut held = Vec::new();
    for (i, c) in sorted.iter().enumerate() {
        held.push((c.session.clone(), c.scope.clone()));
        versions.push(Version {
            id: format!("v{i}"),
            time: c.opened.timestamp(),
            parents: vec![versions[i].id.clone()],
            held: held.clone(),
        });
    }
    bsi_core::holdings::Holdings::of(&versions)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Each drift is a touch of a claim, by a commit made while it was
    /// held (after the second of the registry commit that granted it), not
    /// in the future, not of a session that held the claimed part then;
    /// and every such touch is reported, once, in the commits' order.
    #[test]
    fn drift_is_exactly_the_touches_not_of_the_holder_while_held(
        claims in prop::collection::vec(held_claim(), 1..4),
        commits in prop::collection::vec(landed(4), 0..6),
        now_dt in 0i64..600_000 * 60,
    ) {
        let record = granted(&claims);
        let held: Vec<(&Claim, bool)> = claims.iter().map(|c| (c, false)).collect();
        let now = 1_773_000_000 + now_dt;
        let found = bsi_core::drift::drift(&record, &held, &commits, now);
        let mut expected = Vec::new();
        for k in &commits {
            for t in &k.touched {
                let Some(c) = claims.get(t.claim) else { continue };
                // The first grant of this session and scope is its start.
                let start = claims
                    .iter()
                    .filter(|o| o.session == c.session && o.scope == c.scope)
                    .map(|o| o.opened.timestamp())
                    .min()
                    .unwrap_or(i64::MAX);
                let by_holder_then = k.session.as_deref().is_some_and(|s| {
                    s == c.session
                        || claims.iter().any(|o| {
                            o.session == s
                                && o.opened.timestamp() < k.time
                                && covers(&o.scope, &c.scope, &FlatSections)
                        })
                });
                if k.time > start
                    && k.time <= now + bsi_core::drift::LEEWAY_SECS
                    && !by_holder_then
                {
                    expected.push((k.id.clone(), c.clone()));
                }
            }
        }
        let got: Vec<(String, Claim)> = found.iter().map(|d| (d.commit.clone(), d.claim.clone())).collect();
        prop_assert_eq!(got, expected);
        for d in &found {
            prop_assert_ne!(d.session.as_deref(), Some(d.claim.session.as_str()));
        }
    }

    /// A commit its holder tagged never drifts the holder's claims, and
    /// `may_drift` is false only when the commit drifts nothing.
    #[test]
    fn the_holders_own_commit_never_drifts_and_may_drift_is_a_safe_filter(
        claims in prop::collection::vec(held_claim(), 1..4),
        mut commit in landed(4),
        now_dt in 0i64..600_000 * 60,
    ) {
        let now = 1_773_000_000 + now_dt;
        let record = granted(&claims);
        let held: Vec<(&Claim, bool)> = claims.iter().map(|c| (c, false)).collect();
        if !bsi_core::drift::may_drift(&record, &held, &commit, now) {
            prop_assert!(bsi_core::drift::drift(&record, &held, std::slice::from_ref(&commit), now).is_empty());
        }
        let own: Vec<(&Claim, bool)> = claims.iter().filter(|c| c.session == "s0").map(|c| (c, false)).collect();
        commit.session = Some("s0".into());
        prop_assert!(bsi_core::drift::drift(&record, &own, std::slice::from_ref(&commit), now).is_empty());
        prop_assert!(!bsi_core::drift::may_drift(&record, &own, &commit, now));
    }
}
