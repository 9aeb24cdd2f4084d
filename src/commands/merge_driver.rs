//! `bsi merge-driver BASE OURS THEIRS`: git's merge driver for the registry.
//! Merges the three tables by rows into OURS; when the text around the tables
//! conflicts (or a side cannot be read), falls back to git's own line merge,
//! so conflict markers keep both sides, and fails as git would.

use std::fs;
use std::io::Write;
use std::path::Path;

use super::Ctx;
use bsi_core::api::git_cli;
use bsi_core::api::resolve;
use bsi_core::conflict;
use bsi_core::error::{Error, Result, exit};
use bsi_core::registry::{self, Registry, merge};

fn read(path: &Path) -> Result<String> {
    fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

pub(crate) fn run(ctx: &Ctx, base: &Path, ours: &Path, theirs: &Path) -> Result<u8> {
    let parse = |p: &Path| -> Result<Option<Registry>> { Ok(registry::parse(read(p)?).ok()) };
    let (b, o, t) = (parse(base)?, parse(ours)?, parse(theirs)?);
    let mut err = ctx.out().plain_err();
    // Opened from inside git's merge when it can be: the places of the
    // side merged in are judged by the records this clone knows too.
    let brain = ctx.brain().ok();
    let merged = match (&o, t) {
        (Some(o), Some(t)) => match &brain {
            Some(brain) => brain.merge_published(b.as_ref(), o, t, None),
            None => merge::merge3(b.as_ref(), o, &t, ctx.now),
        }
        .map_err(|e| e.0)
        .and_then(|m| {
            for s in &m.superseded {
                let _ = writeln!(err, "bsi: not kept in the merged registry: {s}");
            }
            registry::parse(m.text.clone())
                .map(|r| (m.text, r))
                .map_err(|e| e.to_string())
        }),
        _ => Err("one side is not a registry bsi can read".into()),
    };
    match merged {
        Ok((text, reg)) => {
            fs::write(ours, &text)
                .map_err(|e| Error::io(format!("cannot write {}", ours.display()), e))?;
            // The heading trees every other overlap is judged on (the
            // work tree and the fetched upstream); the work tree's alone
            // when the brain cannot be opened from inside git's merge.
            let oracle = brain.as_ref().map(bsi_core::api::store::Brain::sections);
            let work_tree = resolve::sections(&ctx.cwd);
            let sections: &dyn bsi_core::scope::Sections = match &oracle {
                Some(o) => o,
                None => &work_tree,
            };
            for (a, b) in conflict::collisions(&reg, sections) {
                let _ = writeln!(
                    err,
                    "bsi: COLLISION in the merged registry: {} {} overlaps {} {} (both kept; `bsi status` shows them)",
                    a.session, a.scope, b.session, b.scope
                );
            }
            Ok(exit::OK)
        }
        Err(why) => {
            let _ = writeln!(
                err,
                "bsi: the registry cannot be merged by rows ({why}); falling back to git's line merge"
            );
            if git_cli::merge_file(&ctx.cwd, ours, base, theirs)? {
                Ok(exit::OK)
            } else {
                Ok(exit::ERROR)
            }
        }
    }
}
