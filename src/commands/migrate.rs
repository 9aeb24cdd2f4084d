//! `bsi migrate`: a brain from before the registry branch — `BRAIN-INDEX.md`
//! tracked on the content branch — moved to the registry branch, every byte
//! of the registry kept, then untracked in one commit that changes nothing
//! else. A person runs it once per brain.

use super::Ctx;
use bsi_core::api::publish::{self, Created, Landed};
use bsi_core::api::store::BRANCH_FILE;
use bsi_core::claims::commit_message;
use bsi_core::error::{Error, Result, exit};

pub(crate) fn run(ctx: &Ctx) -> Result<u8> {
    let (brain, settings) = ctx.open()?;
    // Every precondition before anything is written or pushed: a migration
    // stopped halfway would leave a published registry branch and the file
    // still tracked.
    brain.git.ensure_clean_state()?;
    let (text, registry) = committed_registry(&brain)?;
    if brain.git.head_branch().is_none() {
        return Err(Error::MigrateDetached);
    }
    let message = commit_message(
        "migrate",
        &[],
        &format!(
            "{} from the content branch to {}",
            brain.copy_path, brain.branch
        ),
    );
    let made = publish::create(
        &brain,
        &settings,
        ctx.write_options(true),
        (text, message),
        "migrate",
        false,
    )?;
    let published = match made {
        Created::Made(applied) => applied.landing.landed == Landed::Published,
        Created::Exists(view) => {
            check_rows_present(&brain, &view, &registry)?;
            false
        }
    };
    let untrack = commit_message(
        "migrate",
        &[],
        &format!(
            "untrack {} (the registry lives on branch {})",
            brain.copy_path, brain.branch
        ),
    );
    let removal = brain.git.commit_removal(&brain.copy_path, &untrack)?;
    // The file stays in the work tree, now the excluded copy.
    brain.refresh_copy(&registry);
    ctx.out().say(|w| {
        writeln!(
            w,
            "Migrated — {} now lives on branch {}{}; {} rows kept byte for byte.",
            BRANCH_FILE,
            brain.branch,
            if published { " (published)" } else { "" },
            registry.active_claims.len() + registry.stale_claims.len() + registry.history_len()
        )?;
        writeln!(
            w,
            "This branch has one new commit that untracks {} and changes nothing else ({}).",
            brain.copy_path,
            &removal.to_string()[..8]
        )?;
        writeln!(
            w,
            "Next: push it with your content (`git push`); other clones take it with `git pull`."
        )
    })?;
    Ok(exit::OK)
}

/// The registry as the current branch committed it: what moves. An edit of
/// it nobody committed would be lost, so it is refused.
fn committed_registry(
    brain: &bsi_core::api::store::Brain,
) -> Result<(String, bsi_core::registry::Registry)> {
    let head = brain.git.head_state(&brain.copy_path)?;
    let Some(blob) = head.blob else {
        return Err(Error::NothingToMigrate {
            file: brain.copy_path.clone(),
        });
    };
    // The committed registry is what moves: an edit nobody committed
    // would be lost, so it is refused.
    let on_disk = std::fs::read(&brain.registry).ok();
    let committed = brain.git.blob_bytes(blob)?;
    if on_disk.as_deref() != Some(committed.as_slice()) {
        return Err(Error::RegistryEdited {
            file: brain.copy_path.clone(),
        });
    }
    let text = String::from_utf8(committed).map_err(|_| Error::Registry {
        path: brain.registry.clone(),
        source: bsi_core::registry::ParseError {
            line: 0,
            reason: "the file is not valid UTF-8".into(),
        },
    })?;
    let registry = bsi_core::registry::parse(text.clone()).map_err(|source| Error::Registry {
        path: brain.registry.clone(),
        source,
    })?;
    Ok((text, registry))
}

/// The brain was migrated from another clone (or another branch): the rows
/// of this branch's file must all be on the registry branch already.
fn check_rows_present(
    brain: &bsi_core::api::store::Brain,
    view: &bsi_core::api::store::View,
    registry: &bsi_core::registry::Registry,
) -> Result<()> {
    let merged = bsi_core::registry::merge::merge3(None, &view.registry, registry, brain.now)
        .map_err(|source| Error::MigrationUnmergeable { source })?;
    if !brain.parse(merged.text)?.same_rows(&view.registry) {
        return Err(Error::RowsMissing {
            branch: brain.branch.clone(),
            file: brain.copy_path.clone(),
        });
    }
    Ok(())
}
