//! Several machines, one registry: a real bare repository as the remote and
//! clones of it as machines, with real `git` fetches and pushes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tempfile::TempDir;

use crate::common::{Brain, Machines, clean_env, long, snapshot};
use crate::transcript::Transcript;

/// What a write command must leave untouched on a machine.
fn untouched(m: &Brain) -> (String, String, String) {
    m.user_state()
}

/// A remote and two machines, `a` and `b` (also used by `truth`).
pub(crate) struct Net {
    pub(crate) _origin: Brain,
    pub(crate) bare: TempDir,
    pub(crate) a: Brain,
    pub(crate) b: Brain,
}

impl Net {
    pub(crate) fn new() -> Net {
        let m = Machines::new();
        Net {
            _origin: m.origin,
            bare: m.bare,
            a: m.a,
            b: m.b,
        }
    }

    /// git in the bare repository.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        clean_env(&mut cmd, self.bare.path());
        let o = cmd
            .arg("--git-dir")
            .arg(self.bare.path())
            .args(args)
            .output()
            .expect("run git");
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Names the remote of `a` through `url.<base>.insteadOf`: bsi still
    /// reads it on this disk, but cannot tell from its files that its
    /// branch moved before it pushes (it reads the URL as written), so a
    /// write of `a` behind the remote loses its race, as one of a machine
    /// elsewhere does.
    pub(crate) fn a_behind_unseen(&self) {
        let bare = self.bare.path().display().to_string();
        self.a
            .git(&["config", &format!("url.{bare}.insteadOf"), "brain-remote:"]);
        self.a
            .git(&["remote", "set-url", "origin", "brain-remote:"]);
    }

    /// The registry on the remote's registry branch.
    pub(crate) fn registry(&self) -> String {
        self.git(&["show", "brain-index:BRAIN-INDEX.md"])
    }

    /// Active rows of the remote registry naming `needle`.
    pub(crate) fn active_with(&self, needle: &str) -> Vec<String> {
        active_rows(&self.registry())
            .into_iter()
            .filter(|r| r.contains(needle))
            .collect()
    }

    /// Moves the remote away (unreachable) and back: beside itself, under
    /// its own name and `.away` (a name of its own: `with_extension` would
    /// replace the random part of the name, and two tests at once would
    /// move their remotes to one place).
    pub(crate) fn away(&self) -> PathBuf {
        let mut name = self.bare.path().file_name().expect("a name").to_owned();
        name.push(".away");
        let to = self.bare.path().with_file_name(name);
        std::fs::rename(self.bare.path(), &to).expect("move the remote away");
        to
    }

    pub(crate) fn back(&self, from: &Path) {
        std::fs::rename(from, self.bare.path()).expect("bring the remote back");
    }
}

fn active_rows(text: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            inside = h.trim() == "Claims actifs";
            continue;
        }
        if inside && line.starts_with("| ") && !line.starts_with("| Session") {
            out.push(line.to_string());
        }
    }
    out
}

/// Starts bsi on two machines at once and waits for both.
fn both(
    a: &Brain,
    a_args: &[&str],
    b: &Brain,
    b_args: &[&str],
) -> (std::process::Output, std::process::Output) {
    let spawn = |m: &Brain, args: &[&str]| {
        let mut cmd = m.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().expect("spawn bsi")
    };
    let (pa, pb) = (spawn(a, a_args), spawn(b, b_args));
    (
        pa.wait_with_output().expect("wait"),
        pb.wait_with_output().expect("wait"),
    )
}

#[test]
fn the_same_scope_from_two_machines_at_once_has_one_winner() {
    let n = Net::new();
    let (ua, ub) = (untouched(&n.a), untouched(&n.b));
    let rounds = if long() { 20 } else { 5 };
    for round in 0..rounds {
        let scope = format!("race{round}/");
        let (sa, sb) = (format!("a-{round}"), format!("b-{round}"));
        let (oa, ob) = both(
            &n.a,
            &["open", &scope, "--session", &sa],
            &n.b,
            &["open", &scope, "--session", &sb],
        );
        let codes = (oa.status.code(), ob.status.code());
        let (winner, loser, lost) = match codes {
            (Some(0), Some(3)) => (&sa, &sb, &ob),
            (Some(3), Some(0)) => (&sb, &sa, &oa),
            _ => panic!(
                "round {round}: exit codes {codes:?}\n--- a\n{}\n--- b\n{}",
                String::from_utf8_lossy(&oa.stderr),
                String::from_utf8_lossy(&ob.stderr)
            ),
        };
        let stderr = String::from_utf8_lossy(&lost.stderr);
        assert!(stderr.contains(&format!("{winner} holds")), "{stderr}");
        let rows = n.active_with(&format!("| {scope} |"));
        assert_eq!(rows.len(), 1, "round {round}: {rows:?}");
        assert!(rows[0].starts_with(&format!("| {winner} |")), "{rows:?}");
        // The loser left no trace in its own registry.
        for m in [&n.a, &n.b] {
            assert!(!m.registry().contains(&format!("| {loser} |")));
        }
    }
    // The content branches never moved.
    assert_eq!((untouched(&n.a), untouched(&n.b)), (ua, ub));
    // The remote's registry branch is one straight line of registry commits.
    let log = n.git(&["log", "--format=%s", "--first-parent", "brain-index"]);
    assert_eq!(
        log.lines().filter(|l| l.starts_with("bsi: open")).count(),
        rounds
    );
    assert_eq!(
        n.git(&["rev-list", "--merges", "--count", "brain-index"])
            .trim(),
        "0"
    );
    assert!(!n.git(&["log", "--format=%s", "main"]).contains("bsi:"));
}

#[test]
fn disjoint_scopes_from_two_machines_at_once_both_land() {
    let n = Net::new();
    let (oa, ob) = both(
        &n.a,
        &["open", "agents/alice.md", "--session", "sa"],
        &n.b,
        &["open", "agents/bob.md", "--session", "sb"],
    );
    for o in [&oa, &ob] {
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
    // Two registry-only commits on the remote's registry branch.
    let files = n.git(&["log", "-2", "--name-only", "--format=", "brain-index"]);
    assert_eq!(
        files.lines().filter(|l| !l.is_empty()).collect::<Vec<_>>(),
        vec!["BRAIN-INDEX.md", "BRAIN-INDEX.md"]
    );
}

#[test]
fn a_day_on_two_machines_with_unpushed_work_never_touches_their_branches() {
    let n = Net::new();
    // Both machines have content commits of their own, not pushed yet,
    // and a staged file.
    n.a.write("agents/alice.md", "# Alice\n\nA's work\n");
    n.a.git(&["commit", "-q", "-am", "A's work"]);
    n.a.write("a-staged.md", "staged\n");
    n.a.git(&["add", "a-staged.md"]);
    n.b.write("agents/bob.md", "# Bob\n\nB's work\n");
    n.b.git(&["commit", "-q", "-am", "B's work"]);
    n.b.write("b-staged.md", "staged\n");
    n.b.git(&["add", "b-staged.md"]);
    let (ua, ub) = (untouched(&n.a), untouched(&n.b));
    let check = |what: &str| {
        assert_eq!(untouched(&n.a), ua, "machine a after {what}");
        assert_eq!(untouched(&n.b), ub, "machine b after {what}");
    };
    let mut t = Transcript::new(&n.a);
    let b = n.b.path();
    t.note("$BRAIN is machine a, $TMP/bsi-clone machine b; both have unpushed commits and a staged file.");
    t.bsi(&[
        "open",
        "agents/alice.md",
        "--session",
        "sa",
        "--agent",
        "alice",
    ])
    .ok();
    check("open on a");
    t.bsi_at(
        b,
        &["open", "agents/bob.md", "--session", "sb", "--agent", "bob"],
        &[],
    )
    .ok();
    check("open on b");
    t.bsi_at(
        b,
        &[
            "open",
            "agents/alice.md",
            "--session",
            "sb",
            "--agent",
            "bob",
        ],
        &[],
    )
    .code(3);
    check("refused open on b");
    t.bsi_env(
        &["renew", "sa", "--ttl", "4h", "--agent", "alice"],
        &[("BSI_NOW", "2026-03-14T10:00:00Z")],
    )
    .ok();
    check("renew on a");
    t.bsi_at(
        b,
        &["close", "sb", "--agent", "bob"],
        &[("BSI_NOW", "2026-03-14T10:01:00Z")],
    )
    .ok();
    check("close on b");
    t.bsi_env(
        &["open", "projets/", "--session", "sc", "--agent", "carol"],
        &[("BSI_NOW", "2026-03-14T10:02:00Z")],
    )
    .ok();
    t.bsi_at(b, &["watchdog"], &[("BSI_NOW", "2026-03-14T13:00:00Z")])
        .code(4);
    check("watchdog on b");
    t.bsi_env(
        &["release", "sc", "--confirm"],
        &[("BSI_NOW", "2026-03-14T13:01:00Z")],
    )
    .ok();
    check("release on a");
    t.bsi_at(b, &["sync"], &[("BSI_NOW", "2026-03-14T13:02:00Z")])
        .ok();
    check("sync on b");
    t.check("remote/a_day_on_two_machines_with_unpushed_work_never_touches_their_branches.txt");
    assert_eq!(n.a.registry(), n.registry());

    // The staged files are the users' to commit; then plain pull and push
    // of content work on both, with git's default configuration.
    for m in [&n.a, &n.b] {
        m.git(&["commit", "-q", "-m", "staged work"]);
    }
    // bsi moved nothing of main: a plain pull finds nothing to reconcile.
    for m in [&n.a, &n.b] {
        let pull = m.git_run(&["pull", "--no-edit"]);
        assert_eq!(pull.code, 0, "{}{}", pull.stdout, pull.stderr);
        assert!(
            pull.stdout.contains("Already up to date"),
            "{}",
            pull.stdout
        );
    }
    let push = n.a.git_run(&["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.stderr);
    // B's content now diverges from A's — the users' own work, merged as
    // they choose — and the merge has nothing of bsi in it.
    let pull = n.b.git_run(&["pull", "-q", "--no-rebase", "--no-edit"]);
    assert_eq!(pull.code, 0, "{}{}", pull.stdout, pull.stderr);
    let push = n.b.git_run(&["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.stderr);
    for m in [&n.a, &n.b] {
        let log = m.git(&["log", "--format=%s", "main"]);
        assert!(!log.contains("bsi:"), "{log}");
        assert_eq!(m.status(), "");
    }
    assert!(!n.git(&["log", "--format=%s", "main"]).contains("bsi:"));
}

#[test]
fn a_content_push_after_another_machines_claims_is_accepted() {
    let n = Net::new();
    n.b.bsi(&["open", "agents/", "--session", "sb"]).ok();
    n.b.bsi(&["open", "projets/plan.md#Risks", "--session", "sc"])
        .ok();
    // A never pulled: its content push still fast-forwards main.
    n.a.write("README.md", "# Brain\n\nnews\n");
    n.a.git(&["commit", "-q", "-am", "news"]);
    let push = n.a.git_run(&["push", "-q", "origin", "main"]);
    assert_eq!(push.code, 0, "{}", push.stderr);
}

#[test]
fn status_fetches_first_and_says_how_old_its_view_is_when_it_cannot() {
    let n = Net::new();
    let mut t = Transcript::new(&n.b);
    let a = n.a.path();
    t.note("$BRAIN is machine b, $TMP/bsi-clone machine a.");
    t.note("B cloned before A's claim, and never fetched since.");
    t.bsi_at(
        a,
        &["open", "agents/", "--session", "sa", "--agent", "alice"],
        &[],
    )
    .ok();
    let off = t.bsi(&["status", "--offline", "--json"]);
    off.ok();
    assert_eq!(off.json()["active"].as_array().map(Vec::len), Some(0));
    assert_eq!(off.json()["sync"]["fetched"], false);
    t.bsi(&["status", "--offline"]).ok();
    let j = t.bsi(&["status", "--json"]);
    j.ok();
    let j = j.json();
    assert_eq!(j["active"][0]["session"], "sa");
    assert_eq!(j["sync"]["fetched"], true);
    // Unreachable: the state as last fetched, its age, exit 0.
    t.bsi_at(a, &["close", "sa", "--agent", "alice"], &[]).ok();
    let away = n.away();
    t.note("The remote is moved away: unreachable.");
    // Fetched at 09:33 (the fourth command).
    t.bsi_env(&["status"], &[("BSI_NOW", "2026-03-14T10:15:00Z")])
        .ok();
    t.bsi(&["whoami"]).code(1);
    n.back(&away);
    t.note("The remote is back.");
    t.bsi(&["status"]).ok();
    t.check("remote/status_fetches_first_and_says_how_old_its_view_is_when_it_cannot.txt");
}

#[test]
fn a_fresh_clone_sees_the_registry_at_once_and_init_refuses_a_rival() {
    let n = Net::new();
    n.a.bsi(&["open", "agents/", "--session", "sa"]).ok();
    let c = Brain::clone_of(n.bare.path(), "carol");
    let mut t = Transcript::new(&c);
    t.note("Machine a opened agents/ as sa; then carol cloned the remote into $BRAIN.");
    t.bsi(&["status"]).ok();
    t.bsi(&["init"]).code(1);
    assert_eq!(c.git(&["branch", "--list", "brain-index"]).trim(), "");
    t.bsi(&["open", "agents/bob.md", "--session", "sc"]).code(3);
    t.check("remote/a_fresh_clone_sees_the_registry_at_once_and_init_refuses_a_rival.txt");
    assert_eq!(c.status(), "");
}

#[test]
fn init_publishes_the_new_registry_branch() {
    let origin = Brain::bare_repo();
    origin.write("notes.md", "# Notes\n");
    origin.git(&["add", "-A"]);
    origin.git(&["commit", "-q", "-m", "base"]);
    let bare = origin.publish_to_bare();
    let a = Brain::clone_of(bare.path(), "alice");
    let mut t = Transcript::new(&a);
    t.note("$BRAIN is alice's clone of a remote without a registry.");
    t.bsi(&["init"]).ok();
    let b = Brain::clone_of(bare.path(), "bob");
    t.note("bob clones the remote into $TMP/bsi-clone.");
    t.bsi_at(b.path(), &["init"], &[]).code(1);
    t.bsi_at(b.path(), &["open", "notes.md", "--session", "sb"], &[])
        .ok();
    t.bsi(&["status"]).ok();
    t.check("remote/init_publishes_the_new_registry_branch.txt");
    assert_eq!(a.head_commits(), 1);
    assert_eq!(b.head_commits(), 1);
}

#[test]
fn a_decision_made_while_the_remote_is_away_says_what_it_rests_on() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    t.bsi(&["open", "agents/", "--session", "sa"]).ok();
    let before = (n.a.registry(), n.a.commits());
    let away = n.away();
    t.note("The remote is moved away: unreachable.");
    // Nothing to write: the answer rests on the registry as last fetched,
    // and says which remote could not be asked.
    let r = t.bsi(&["open", "agents/", "--session", "sa"]);
    r.ok();
    assert!(
        r.stderr
            .contains("origin/brain-index could not be reached (fatal: "),
        "{}",
        r.stderr
    );
    n.back(&away);
    assert_eq!((n.a.registry(), n.a.commits()), before);
    t.check("remote/a_decision_made_while_the_remote_is_away_says_what_it_rests_on.txt");
}

#[test]
fn an_unreachable_remote_records_locally_then_sync_publishes() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    let away = n.away();
    t.note("The remote is moved away: unreachable.");
    t.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    assert_eq!(n.a.active().len(), 1);
    assert_eq!(n.a.last_subject(), "bsi: open sa agents/alice.md");
    assert_eq!(n.a.status(), "");
    t.bsi(&["status"]).ok();
    t.bsi(&["sync"]).code(7);
    n.back(&away);
    t.note("The remote is back.");
    assert!(n.active_with("| sa |").is_empty());

    t.bsi(&["sync"]).ok();
    assert_eq!(n.active_with("| sa | agents/alice.md |").len(), 1);
    let st = t.bsi(&["status"]);
    st.ok();
    assert!(!st.stdout.contains("NOT PUBLISHED"), "{}", st.stdout);
    let j = t.bsi(&["status", "--json"]).json();
    assert_eq!(j["sync"]["unpublished"].as_array().map(Vec::len), Some(0));
    assert_eq!(j["sync"]["minutes_since_sync"], 0);
    assert_eq!(j["sync"]["remote"], "origin/brain-index");
    // A second sync has nothing to publish, from either machine.
    let tip = n.git(&["rev-parse", "brain-index"]);
    t.bsi(&["sync"]).ok();
    t.bsi_at(n.b.path(), &["sync"], &[]).ok();
    assert_eq!(n.git(&["rev-parse", "brain-index"]), tip);
    t.check("remote/an_unreachable_remote_records_locally_then_sync_publishes.txt");
}

#[test]
fn a_collision_found_at_sync_is_reported_and_nothing_is_dropped() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    let b = n.b.path();
    let away = n.away();
    t.note("The remote is moved away: unreachable.");
    t.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    n.back(&away);
    t.note("The remote is back.");
    t.bsi_at(b, &["open", "agents/", "--session", "sb"], &[])
        .ok();

    t.bsi(&["sync"]).code(3);
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
    assert_eq!(n.a.registry(), n.registry());
    assert_eq!(n.a.status(), "");
    // The other machine sees the collision at once, and while it stands
    // status and watchdog exit 3.
    t.bsi_at(b, &["sync"], &[]).code(3);
    t.bsi_at(b, &["status"], &[]).code(3);
    t.bsi_at(b, &["watchdog"], &[]).code(3);
    t.check("remote/a_collision_found_at_sync_is_reported_and_nothing_is_dropped.txt");
}

/// A records `sa agents/alice.md` while the remote is away (exit 7, kept
/// locally), then B publishes `sb` on `b_scope` once it is back.
fn pending_then_published_elsewhere(n: &Net, t: &mut Transcript<'_>, b_scope: &str) {
    let away = n.away();
    t.note("The remote is moved away: unreachable.");
    t.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    n.back(&away);
    t.note("The remote is back.");
    t.bsi_at(n.b.path(), &["open", b_scope, "--session", "sb"], &[])
        .ok();
}

#[test]
fn a_pending_claim_that_collides_is_said_by_the_next_open_that_publishes_it() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    pending_then_published_elsewhere(&n, &mut t, "agents/");
    // An unrelated open publishes the pending claim with its own: it says
    // the collision and exits 3.
    t.bsi(&["open", "README.md", "--session", "sr"]).code(3);
    t.check("remote/a_pending_claim_that_collides_is_said_by_the_next_open_that_publishes_it.txt");
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sr |").len(), 1);
    // Its commit says which offline change it also carried.
    let msg = n.git(&["log", "-1", "--format=%B", "brain-index"]);
    assert!(msg.contains("Also publishes"), "{msg}");
    assert!(msg.contains("bsi: open sa agents/alice.md"), "{msg}");
}

#[test]
fn a_diverged_registry_branch_is_read_and_published_as_the_union_of_rows() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    pending_then_published_elsewhere(&n, &mut t, "projets/");
    // A fetched: its view is both rows, before anything is published.
    let st = t.bsi(&["status", "--json"]);
    st.ok();
    let sessions: Vec<String> = st.json()["active"]
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["session"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(sessions, vec!["sa", "sb"]);
    t.bsi(&["sync"]).ok();
    t.check("remote/a_diverged_registry_branch_is_read_and_published_as_the_union_of_rows.txt");
    assert_eq!(n.active_with("| sa |").len(), 1);
    assert_eq!(n.active_with("| sb |").len(), 1);
    assert_eq!(
        n.git(&["rev-list", "--merges", "--count", "brain-index"])
            .trim(),
        "0"
    );
}

#[test]
fn a_close_on_one_machine_is_seen_on_the_other_at_once() {
    let n = Net::new();
    let mut t = Transcript::new(&n.b);
    let a = n.a.path();
    t.note("$BRAIN is machine b, $TMP/bsi-clone machine a.");
    t.bsi_at(
        a,
        &["open", "agents/", "--session", "sa", "--agent", "alice"],
        &[],
    )
    .ok();
    t.bsi(&["status"]).ok();
    t.bsi_at(a, &["close", "sa", "--agent", "alice"], &[]).ok();
    assert!(n.active_with("| sa |").is_empty());
    // B's status fetches the registry branch first.
    t.bsi(&["status"]).ok();
    t.bsi(&["sync"]).ok();
    t.check("remote/a_close_on_one_machine_is_seen_on_the_other_at_once.txt");
    assert_eq!(n.b.history().len(), 1);
    assert_eq!(n.b.status(), "");
}

#[test]
fn a_remote_named_in_bsi_toml_is_published_to() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    t.bsi(&["sync"]).ok();
    // A second remote, and no upstream: nothing says where to publish.
    let backup = crate::common::scratch("bsi-test");
    let other = backup.path().to_str().expect("utf-8");
    t.git(&["init", "-q", "--bare", other]).ok();
    t.git(&["remote", "add", "backup", other]).ok();
    t.git(&["branch", "--unset-upstream"]).ok();
    t.git(&["update-ref", "-d", "refs/remotes/origin/brain-index"])
        .ok();
    // The clone recorded the remote where it found the registry: forgotten.
    t.git(&["config", "--unset", "bsi.remote"]).ok();
    let before = (n.a.registry(), n.a.commits());
    t.note("Which remote is it? bsi asks rather than keep the claim where no one sees it.");
    t.bsi(&["open", "agents/", "--session", "sa"]).code(2);
    assert_eq!((n.a.registry(), n.a.commits()), before);
    assert!(n.active_with("| sa |").is_empty());
    // The brain's shared setting names the remote.
    n.a.write(".bsi.toml", "remote = \"origin\"\n");
    t.note(".bsi.toml: remote = \"origin\"");
    t.bsi(&["open", "projets/", "--session", "sp"]).ok();
    assert_eq!(n.active_with("| sp |").len(), 1);
    // A name that is not a remote is a usage error, and nothing is written.
    n.a.write(".bsi.toml", "remote = \"nowhere\"\n");
    t.note(".bsi.toml: remote = \"nowhere\"");
    let before = n.a.registry();
    t.bsi(&["open", "README.md", "--session", "sr"]).code(2);
    assert_eq!(n.a.registry(), before);
    t.check("remote/a_remote_named_in_bsi_toml_is_published_to.txt");
}

#[test]
fn a_push_refused_by_the_remotes_policy_is_said_as_such() {
    let n = Net::new();
    let hook = n.bare.path().join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'registry pushes are closed today' >&2\nexit 1\n",
    )
    .expect("hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let before = n.a.registry();
    let mut t = Transcript::new(&n.a);
    t.note("The remote's pre-receive hook says 'registry pushes are closed today' and exits 1.");
    t.bsi(&["open", "agents/", "--session", "sa"]).code(1);
    // Nothing written anywhere, and no pending change.
    assert_eq!(n.a.registry(), before);
    assert!(n.active_with("| sa |").is_empty());
    let st = t.bsi(&["status"]);
    assert!(!st.stdout.contains("NOT PUBLISHED"), "{}", st.stdout);
    t.check("remote/a_push_refused_by_the_remotes_policy_is_said_as_such.txt");
}

/// A `git` that speaks French under `LANG=fr_FR.UTF-8`, on PATH or in
/// /usr/bin (some machines put a build without translations first).
fn french_git(dir: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut candidates: Vec<PathBuf> = std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .collect();
    candidates.push(PathBuf::from("/usr/bin/git"));
    candidates.into_iter().filter(|g| g.is_file()).find(|g| {
        let mut cmd = Command::new(g);
        clean_env(&mut cmd, dir);
        cmd.current_dir(dir)
            .env("LANG", "fr_FR.UTF-8")
            .env("LC_ALL", "fr_FR.UTF-8")
            .args(["status"])
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Sur la branche"))
    })
}

#[cfg(unix)]
#[test]
fn a_lost_race_under_a_translated_git_is_retried_not_taken_for_offline() {
    let n = Net::new();
    let Some(git) = french_git(n.a.path()) else {
        eprintln!("skipped: no git here speaks French (fr_FR.UTF-8 missing; .ci/run installs it)");
        return;
    };
    // That git first on PATH, and the user's locale French.
    let bin = crate::common::scratch("bsi-test");
    std::os::unix::fs::symlink(&git, bin.path().join("git")).expect("symlink");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fr = [
        ("LANG", "fr_FR.UTF-8"),
        ("LC_ALL", "fr_FR.UTF-8"),
        ("PATH", path.as_str()),
    ];
    // A's last fetched tip is behind once B has written: A's push loses
    // the race, and must be retried, not taken for "offline".
    n.a_behind_unseen();
    n.a.bsi_env(&["status"], &fr).ok();
    n.b.bsi(&["open", "projets/", "--session", "sb"]).ok();
    n.a.bsi_env(&["open", "agents/", "--session", "sa", "-v"], &fr)
        .ok()
        .stderr_has("lost a race");
    n.a.bsi_env(&["open", "projets/plan.md", "--session", "sa"], &fr)
        .code(3)
        .stderr_has("sb holds");
    assert_eq!(n.active_with("| sa |").len(), 1);
    // Truly offline under the same locale is still exit 7.
    let away = n.away();
    n.a.bsi_env(&["open", "README.md", "--session", "sa"], &fr)
        .code(7);
    n.back(&away);
}

#[cfg(unix)]
#[test]
fn a_publish_killed_at_any_moment_loses_nothing_and_invents_nothing() {
    let n = Net::new();
    let kills = if long() { 60 } else { 12 };
    let first_span = crate::reliability::run_time_us(|i| {
        n.a.bsi(&["open", &format!("warm{i}/"), "--session", &format!("w{i}")])
            .ok();
    });
    let user = untouched(&n.a);
    let mut landed = 0;
    let mut moments = crate::reliability::KillMoments::new(7, first_span);
    let (kills, interrupted) = moments.kill(kills, |i, pause| {
        let session = format!("k{i}");
        let scope = format!("zone{i}/");
        // bsi and the git it runs die together, as on a crash or a Ctrl-C
        // of the whole process group.
        let mut cmd = n.a.command(&["open", &scope, "--session", &session]);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(pause);
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stderr(Stdio::null())
            .status();
        let status = child.wait().expect("wait");
        // The next command on that machine settles whatever was half done.
        let s = n.a.bsi(&["sync"]);
        assert!(
            s.code == 0,
            "kill {i}: sync exited {}: {}",
            s.code,
            s.stderr
        );
        let row = format!("| {session} | {scope} |");
        let remote = n.registry().contains(&row);
        let local = n.a.registry().contains(&row);
        assert_eq!(
            remote,
            local,
            "kill {i}: the machine and the remote disagree\nsync: {}{}\nlocal: {}\ntracking: {}\nremote: {}",
            s.stdout,
            s.stderr,
            n.a.git(&["log", "--oneline", "-4", "brain-index"]),
            n.a.git(&["log", "--oneline", "-4", "origin/brain-index"]),
            n.git(&["log", "--oneline", "-4", "brain-index"]),
        );
        assert_eq!(untouched(&n.a), user, "kill {i}: the user's branch moved");
        landed += usize::from(remote);
        assert_eq!(
            n.git(&["rev-list", "--merges", "--count", "brain-index"])
                .trim(),
            "0"
        );
        !status.success()
    });
    eprintln!(
        "publish kills: {kills}, of them mid-run: {interrupted}, claims that reached the remote: {landed}"
    );
    assert!(
        interrupted * 4 >= kills,
        "only {interrupted} of {kills} kills landed while bsi ran"
    );
    n.b.bsi(&["sync"]).ok();
    assert_eq!(n.b.registry(), n.registry());
    n.git(&["fsck", "--no-progress"]);
}

#[test]
fn a_publish_killed_at_every_write_point_loses_nothing() {
    let n = Net::new();
    let user = untouched(&n.a);
    for &p in bsi_core::api::store::FAULT_POINTS {
        let session = format!("k-{p}");
        let scope = format!("zone-{p}/");
        let r = n.a.bsi_env(
            &["open", &scope, "--session", &session],
            &[("BSI_FAULT_POINT", p)],
        );
        assert_ne!(r.code, 0, "{p}: the fault point was not reached");
        let row = format!("| {session} | {scope} |");
        // Reached the remote only once it was pushed.
        assert_eq!(
            n.registry().contains(&row),
            matches!(p, "after-push" | "after-tracking" | "after-branch"),
            "{p}"
        );
        n.a.bsi(&["sync"]).ok();
        assert_eq!(
            n.a.registry().contains(&row),
            n.registry().contains(&row),
            "{p}: the machine and the remote disagree"
        );
        assert_eq!(untouched(&n.a), user, "{p}");
    }
}

#[test]
fn a_section_nested_in_a_claimed_one_on_the_remote_is_refused() {
    let n = Net::new();
    let mut t = Transcript::new(&n.b);
    t.note("$BRAIN is machine b, $TMP/bsi-clone machine a.");
    t.bsi_at(
        n.a.path(),
        &["open", "projets/plan.md#Risks", "--session", "sa"],
        &[],
    )
    .ok();
    // On machine A, Q1 moves under Risks, and is pushed as content.
    n.a.write(
        "projets/plan.md",
        "# Plan\n\nintro\n\n## Goals\n\ngoal text\n\n### Q2\n\nq2 text\n\n## Risks\n\nrisk text\n\n### Q1\n\nq1 text\n",
    );
    n.a.git(&["commit", "-q", "-am", "Q1 is a risk now"]);
    n.a.git(&["push", "-q", "origin", "main"]);
    t.note("On machine a, Q1 moved under Risks, committed and pushed to main.");
    // Machine B fetched the content but did not merge: in its work tree Q1
    // is still under Goals, but upstream it sits under the claimed Risks.
    t.git(&["fetch", "-q"]).ok();
    t.bsi(&["open", "projets/plan.md#Q1", "--session", "sb"])
        .code(3);
    t.bsi(&["open", "projets/plan.md#Q2", "--session", "sb"])
        .ok();
    t.check("remote/a_section_nested_in_a_claimed_one_on_the_remote_is_refused.txt");
}

#[test]
fn many_machines_opening_distinct_scopes_at_once_all_land() {
    // 32 machines in the long mode (CI runs it), 8 otherwise.
    let count = if long() { 32 } else { 8 };
    let origin = Brain::new();
    let bare = origin.publish_to_bare();
    let machines: Vec<Brain> = (0..count)
        .map(|i| Brain::clone_of(bare.path(), &format!("m{i}")))
        .collect();
    // A barrier: every machine waits on a lock this test holds, then all
    // are let go at once (no timing in the assertion).
    let gate = origin.path().join("gate");
    let lock = std::fs::File::create(&gate).expect("gate");
    lock.lock().expect("lock the gate");
    let children: Vec<_> = machines
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut cmd = Command::new("flock");
            clean_env(&mut cmd, m.path());
            cmd.current_dir(m.path())
                .env("BSI_NOW", &m.now)
                .arg("-s")
                .arg(&gate)
                .arg(crate::common::bin())
                .args(["open", &format!("zone{i}/"), "--session", &format!("s{i}")])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    lock.unlock().expect("open the gate");
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect();
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(
            o.status.code(),
            Some(0),
            "machine {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, bare.path());
    let reg = cmd
        .arg("--git-dir")
        .arg(bare.path())
        .args(["show", "brain-index:BRAIN-INDEX.md"])
        .output()
        .expect("git");
    let reg = String::from_utf8_lossy(&reg.stdout).into_owned();
    for i in 0..count {
        assert!(
            reg.contains(&format!("| s{i} | zone{i}/ |")),
            "s{i} missing"
        );
    }
}

/// The transcript from the "stayed busy:" of its exit-8 error on.
fn busy_stderr(text: &str) -> &str {
    text.split_once("stayed busy: ").map_or("", |(_, r)| r)
}

#[test]
fn a_remote_busy_past_the_publish_timeout_exits_8_and_writes_nothing() {
    let n = Net::new();
    let mut t = Transcript::new(&n.a);
    // A fetched, then B moved the remote: A's push is sure to lose once,
    // and a timeout of 1 ms leaves no time to try again.
    n.a_behind_unseen();
    t.bsi(&["status"]).ok();
    t.bsi_at(n.b.path(), &["open", "projets/", "--session", "sb"], &[])
        .ok();
    let before = n.a.registry();
    let tip = n.git(&["rev-parse", "brain-index"]);
    t.bsi_env(
        &["open", "agents/", "--session", "sa"],
        &[("BSI_PUBLISH_TIMEOUT", "1ms")],
    )
    .code(8);
    // How long the lost push took varies.
    let busy = "the one push lost a race to other writers within ";
    assert!(busy_stderr(&t.text()).starts_with(busy), "{}", t.text());
    assert_eq!(n.a.registry(), before);
    assert_eq!(n.git(&["rev-parse", "brain-index"]), tip);
    assert!(!t.bsi(&["status"]).stdout.contains("NOT PUBLISHED"));
    // With the default timeout the same command lands.
    t.bsi(&["open", "agents/", "--session", "sa"]).ok();
    assert_eq!(n.active_with("| sa |").len(), 1);
    let text = t.text();
    let seconds = busy_stderr(&text)
        .strip_prefix(busy)
        .and_then(|r| r.split_once(" s;"))
        .map(|(s, _)| s)
        .filter(|s| s.parse::<f64>().is_ok())
        .unwrap_or_else(|| panic!("no time in:\n{text}"));
    snapshot(
        "remote/a_remote_busy_past_the_publish_timeout_exits_8_and_writes_nothing.txt",
        &text.replace(
            &format!("{busy}{seconds} s;"),
            &format!("{busy}<seconds> s;"),
        ),
    );
}

#[test]
fn a_pull_of_the_registry_branch_merges_by_rows_without_bsi_on_path() {
    let n = Net::new();
    n.a.bsi(&["hook", "install"]).ok();
    // A records a claim offline; B publishes one.
    let away = n.away();
    n.a.bsi(&["open", "agents/alice.md", "--session", "sa"])
        .code(7);
    n.back(&away);
    n.b.bsi(&["open", "projets/", "--session", "sb"]).ok();
    // A person fixes things by hand on the registry branch, in a work tree
    // of its own, and pulls: git merges BRAIN-INDEX.md with bsi's driver,
    // found by its absolute path although bsi is not on PATH.
    let (_place, wt) = n.a.worktree("brain-index", None);
    let mut cmd = Command::new("git");
    clean_env(&mut cmd, n.a.path());
    let out = cmd
        .current_dir(&wt)
        .env("PATH", "/usr/bin:/bin")
        .args([
            "pull",
            "-q",
            "--no-rebase",
            "--no-edit",
            "origin",
            "brain-index",
        ])
        .output()
        .expect("git pull");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = std::fs::read_to_string(wt.join("BRAIN-INDEX.md")).expect("read");
    assert!(!merged.contains("<<<<<<<"), "{merged}");
    assert!(merged.contains("| sa | agents/alice.md |"), "{merged}");
    assert!(merged.contains("| sb | projets/ |"), "{merged}");
}

#[test]
fn the_registry_remote_does_not_follow_the_checked_out_branch() {
    let n = Net::new();
    // Machine b holds the plan, published to origin.
    n.b.bsi(&["open", "projets/plan.md", "--session", "sb"])
        .ok();
    // Machine a works on a branch whose upstream is a personal fork.
    let fork = crate::common::scratch("bsi-remote");
    let url = fork.path().to_str().expect("utf-8");
    n.a.git(&["init", "-q", "--bare", url]);
    n.a.git(&["remote", "add", "fork", url]);
    n.a.git(&["checkout", "-q", "-b", "feature"]);
    n.a.git(&["push", "-q", "-u", "fork", "feature"]);
    n.a.bsi(&["hook", "install"]).ok();
    let before = untouched(&n.a);

    // The registry is found on origin, whatever the branch follows.
    n.a.bsi(&["status"]).ok().stdout_has("sb");
    assert_eq!(untouched(&n.a), before);
    assert_eq!(
        n.a.git(&["config", "bsi.remote"]).trim(),
        "origin",
        "found once, recorded for the clone"
    );

    // The commit guard sees the other session's claim.
    n.a.write("projets/plan.md", "# Plan\n\nmine\n");
    n.a.git(&["add", "projets/plan.md"]);
    n.a.git_at(n.a.path(), Some("sa"), &["commit", "-q", "-m", "plan"])
        .code(1)
        .stderr_has("sb");
    n.a.git(&["reset", "-q", "--hard"]);
    let before = untouched(&n.a);

    // No second registry on the fork, and no overlapping claim.
    n.a.bsi(&["init"]).code(1).stderr_has("origin/brain-index");
    n.a.bsi(&["open", "projets/plan.md", "--session", "sa"])
        .code(3);
    assert_eq!(untouched(&n.a), before);
    let on_fork = Command::new("git")
        .arg("--git-dir")
        .arg(fork.path())
        .args(["branch", "--list", "brain-index"])
        .output()
        .expect("run git");
    assert_eq!(String::from_utf8_lossy(&on_fork.stdout).trim(), "");
    assert!(n.active_with("| sa |").is_empty());
    assert_eq!(n.active_with("| sb |").len(), 1);

    // Back on main: the same registry, no collision.
    n.a.git(&["checkout", "-q", "main"]);
    n.a.bsi(&["status"]).ok().stdout_has("sb");
    assert!(!n.a.bsi(&["status"]).stdout.contains("COLLISION"));
}

#[test]
fn init_refuses_when_another_remote_holds_the_registry() {
    let n = Net::new();
    // A clone whose fork is named for bsi, and origin holds the registry.
    let fork = crate::common::scratch("bsi-remote");
    let url = fork.path().to_str().expect("utf-8");
    n.a.git(&["init", "-q", "--bare", url]);
    n.a.git(&["remote", "add", "fork", url]);
    n.a.git(&["config", "bsi.remote", "fork"]);
    let before = untouched(&n.a);
    n.a.bsi(&["init"])
        .code(2)
        .stderr_has("`origin` already holds")
        .stderr_has("git config bsi.remote origin");
    assert_eq!(untouched(&n.a), before);
    assert_eq!(n.a.git(&["branch", "--list", "brain-index"]).trim(), "");
    // Nothing known of any remote's registry: init asks them.
    n.a.git(&["config", "--unset", "bsi.remote"]);
    n.a.git(&["update-ref", "-d", "refs/remotes/origin/brain-index"]);
    n.a.bsi(&["init"]).code(1).stderr_has("origin/brain-index");
    assert_eq!(n.a.git(&["config", "bsi.remote"]).trim(), "origin");
    assert_eq!(n.a.git(&["branch", "--list", "brain-index"]).trim(), "");
}

/// Claim on the first write that also publishes a claim recorded offline,
/// which collides with another machine's: the edit hook says the collision
/// and what to do, in the tool's channel to the model, as the CLI says it.
#[test]
fn a_claim_on_write_that_publishes_a_collision_says_so_to_the_agent() {
    let n = Net::new();
    n.a.write(".bsi.toml", "claim_on_write = true\n");
    let away = n.away();
    n.a.bsi(&["open", "notes/", "--session", "sa", "--agent", "claude"])
        .code(7);
    n.back(&away);
    n.b.bsi(&["open", "notes/", "--session", "sb", "--agent", "b"])
        .ok();
    let user = untouched(&n.a);
    let ev = crate::agent_hook::replace_event(
        &n.a,
        "claude",
        "projets/plan.md",
        "goal text",
        "new goal",
    );
    let r = crate::agent_hook::with_stdin(
        &n.a,
        &["hook", "edit", "--tool", "claude"],
        &ev,
        &[("BSI_SESSION", "sa"), ("BSI_AGENT", "claude")],
    );
    r.ok();
    let v = r.json();
    let said = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("a message for the model")
        .to_string();
    assert!(said.contains("bsi claimed projets/plan.md#Goals"), "{said}");
    assert!(
        said.contains("COLLISION: sa notes/ overlaps sb notes/")
            || said.contains("COLLISION: sb notes/ overlaps sa notes/"),
        "{said}"
    );
    assert!(said.contains("bsi close sa --scope notes/"), "{said}");
    // What the agent reads last is what to run.
    assert!(said.trim_end().ends_with("--confirm --force`."), "{said}");
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"],
        serde_json::Value::Null
    );
    // Both claims are on the remote now, and the user's files are as they were.
    assert_eq!(n.active_with("| sa | notes/ |").len(), 1);
    assert_eq!(n.active_with("| sb | notes/ |").len(), 1);
    assert_eq!(untouched(&n.a), user);
}

/// The first publish of a registry the remote lacks, by a command that
/// only reads, waits a short while for the writer lock and no longer: while
/// another bsi holds it, `status` answers with the registry not published
/// (that writer publishes it); once free, the next `status` publishes.
#[test]
fn a_first_publish_does_not_wait_long_for_a_held_writer_lock() {
    let (m1, bare, _m2) = remote_added_later();
    let held = crate::agent_hook::hold_writer_lock(&m1);
    let busy = m1.bsi(&["status"]);
    busy.ok();
    assert!(!busy.stdout.contains("Published"), "{}", busy.stdout);
    busy.stdout_has("NOT PUBLISHED");
    let remote_branches = || {
        let out = Command::new("git")
            .current_dir(bare.path())
            .args(["branch", "--list", "brain-index"])
            .output()
            .expect("git branch");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(
        remote_branches(),
        "",
        "nothing pushed while the lock is held"
    );
    drop(held);
    m1.bsi(&["status"]).ok().stdout_has(
        "Published the registry to origin/brain-index (1 change(s)): the remote had none",
    );
    assert!(remote_branches().contains("brain-index"));
}

/// A brain initialised before its remote existed (the README's order:
/// `bsi init`, then `git remote add origin …` and `git push -u origin
/// main`). The second machine is told the truth (the remote has no
/// registry yet; the clone that made it publishes it with `bsi sync`), and
/// the first machine's next `bsi status` publishes it, and says so.
#[test]
fn a_registry_made_before_its_remote_reaches_it_with_the_next_status() {
    let (m1, bare, m2) = remote_added_later();
    let main_before = m1.git(&["rev-parse", "main"]);

    // Machine 2: no registry anywhere it can see, and no advice that
    // cannot help (`git fetch`) or would make a rival (`bsi init` first).
    let lost = m2.bsi(&["status"]);
    lost.code(5)
        .stderr_has("the remote has no `origin/brain-index` either")
        .stderr_has(
            "that clone must publish it, there (its next bsi command does it too): `bsi sync`",
        );
    assert!(!lost.stderr.contains("git fetch"), "{}", lost.stderr);

    // Machine 1: its next status publishes the registry, and says so.
    let first = m1.bsi(&["status"]);
    first.ok().stdout_has(
        "Published the registry to origin/brain-index (1 change(s)): the remote had none",
    );
    assert!(!first.stdout.contains("NOT PUBLISHED"), "{}", first.stdout);
    let remote_branches = Command::new("git")
        .current_dir(bare.path())
        .args(["branch", "--list", "brain-index"])
        .output()
        .expect("git branch");
    assert!(String::from_utf8_lossy(&remote_branches.stdout).contains("brain-index"));
    // Once only.
    let again = m1.bsi(&["status"]);
    assert!(!again.ok().stdout.contains("Published"), "{}", again.stdout);
    // The user's branch is untouched.
    assert_eq!(m1.git(&["rev-parse", "main"]), main_before);

    // Machine 2 now has it, and the two machines share claims.
    m2.bsi(&["status"]).ok().stdout_has("No claims");
    m2.bsi(&["open", "notes/a.md", "--session", "s2", "--agent", "bob"])
        .ok();
    m1.bsi(&["status"]).ok().stdout_has("s2");
    m1.bsi(&["open", "notes/a.md", "--session", "s1", "--agent", "alice"])
        .code(3);
}

/// A brain whose registry was made before its remote was added (machine
/// 1), the remote with `main` only, and a clone of it (machine 2).
fn remote_added_later() -> (Brain, TempDir, Brain) {
    let m1 = Brain::bare_repo();
    m1.write("notes/a.md", "# A\n");
    m1.git(&["add", "-A"]);
    m1.git(&["commit", "-q", "-m", "first"]);
    m1.bsi(&["init"]).ok();
    let bare = crate::common::scratch("bsi-remote");
    let mut init = Command::new("git");
    clean_env(&mut init, bare.path());
    let r = init
        .current_dir(bare.path())
        .args(["init", "-q", "--bare", "-b", "main"])
        .output()
        .expect("git init --bare");
    assert!(r.status.success());
    m1.git(&[
        "remote",
        "add",
        "origin",
        bare.path().to_str().expect("utf-8"),
    ]);
    m1.git(&["push", "-q", "-u", "origin", "main"]);
    let m2 = Brain::clone_of(bare.path(), "bob");
    (m1, bare, m2)
}

/// The same brain: machine 1's next write publishes the registry with its
/// own change, and says so.
#[test]
fn a_registry_made_before_its_remote_reaches_it_with_the_next_write() {
    let (m1, _bare, m2) = remote_added_later();
    m1.bsi(&["open", "notes/a.md", "--session", "s1", "--agent", "alice"])
        .ok()
        .stderr_has("note: this also published 1 earlier change(s) of this clone that the remote did not have: bsi: init");
    m2.bsi(&["status"]).ok().stdout_has("s1");
}
