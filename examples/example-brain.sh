#!/usr/bin/env bash
# Makes the example brain of the README and the docs: a git repository in a
# new temporary directory (or in DIR, which must not exist yet) holding
#   agents/alice.md  agents/bob.md
#   notes/ideas.md
#   projets/plan.md  (## Goals with ### Q1 and ### Q2, then ## Risks)
#   README.md
# with one commit, and prints its path. No registry yet: run `bsi init` in it.
#
# Usage: cd "$(examples/example-brain.sh)"
#        examples/example-brain.sh DIR
set -euo pipefail

if [ $# -gt 0 ]; then
  brain=$1
  mkdir "$brain"
else
  brain=$(mktemp -d "${TMPDIR:-/tmp}/bsi-brain.XXXXXX")
fi
cd "$brain"
git init -q -b main
git config user.name "Example Person"
git config user.email "person@example.com"
git config commit.gpgsign false
mkdir -p agents notes projets
printf '# Alice\n\nWhat Alice knows.\n' > agents/alice.md
printf '# Bob\n\nWhat Bob knows.\n' > agents/bob.md
printf '# Ideas\n\n- a brain that keeps its sessions apart\n' > notes/ideas.md
printf '# Plan\n\n## Goals\n\n### Q1\n\nShip it.\n\n### Q2\n\nGrow it.\n\n## Risks\n\nNone yet.\n' > projets/plan.md
printf '# Brain\n\nThe notes of a small team.\n' > README.md
git add -A
git commit -q -m "A small brain"
pwd
