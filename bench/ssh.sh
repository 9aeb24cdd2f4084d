#!/usr/bin/env bash
# What SSH connection sharing saves a brain on an SSH remote: one `bsi open`
# (one push) and one `bsi status` (one fetch) over ssh, each connection new,
# then with ControlMaster/ControlPersist reusing one connection; on loopback
# and over a 30 ms link (examples/delay_proxy.rs in front of sshd).
#
#   bench/ssh.sh          needs sshd (Debian's openssh-server; installed if missing)
#
# sshd runs as this user on loopback, inside a network namespace of the run's
# own when the system allows it, with a key made for the run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'ssh: %s\n' "$*" >&2; }

if [[ ${1:-} != --in-namespace ]]; then
    if [[ ! -x /usr/sbin/sshd ]]; then
        say "installing openssh-server"
        SUDO=
        [[ $(id -u) -ne 0 ]] && SUDO=sudo
        $SUDO apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openssh-server >/dev/null
    fi
    (cd "$ROOT" && cargo build --release --quiet && cargo build --release --quiet --example delay_proxy)
    if command -v unshare >/dev/null && unshare --net true 2>/dev/null; then
        exec unshare --net -- bash -c 'ip link set lo up 2>/dev/null || true; exec "$0" --in-namespace' "$0"
    fi
    say "no network namespace here: using the host's loopback"
fi

BSI="${CARGO_TARGET_DIR:-$ROOT/target}/release/bsi"
PROXY="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/delay_proxy"
RUNS=${RUNS:-15}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bsi-ssh.XXXXXX")
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

export HOME="$WORK/home" GIT_CONFIG_NOSYSTEM=1 BSI_AGENT=bench
export BSI_NOW=2026-03-14T09:30:00+00:00
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main

# sshd of our own, key authentication only.
PORT=$((20000 + RANDOM % 20000))
SLOW=$((PORT + 1))
ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/client_key"
cp "$WORK/client_key.pub" "$WORK/authorized_keys"
chmod 600 "$WORK/authorized_keys"
cat >"$WORK/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $PORT
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PidFile $WORK/sshd.pid
EOF
mkdir -p /run/sshd 2>/dev/null || true
/usr/sbin/sshd -D -f "$WORK/sshd_config" -E "$WORK/sshd.log" &
PIDS+=($!)
"$PROXY" "127.0.0.1:$SLOW" "127.0.0.1:$PORT" 30 &
PIDS+=($!)
sleep 0.5

# A brain on an ssh remote.
(
    cd "$WORK" && git init -q origin && cd origin
    mkdir -p notes && echo "# N" >notes/a.md && git add -A && git commit -q -m base
    "$BSI" init -q >/dev/null
)
git clone -q --bare "$WORK/origin" "$WORK/brain.git"
BASE=$(git -C "$WORK/brain.git" rev-parse brain-index)
USER_NAME=$(id -un)

SSH_BASE="ssh -i $WORK/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes"
SHARED="-o ControlMaster=auto -o ControlPath=$WORK/cm-%C -o ControlPersist=60"

median_ms() {
    local dir=$1 cmd=$2 prep=$3 i t0 t1 all=()
    for ((i = 0; i < RUNS; i++)); do
        (cd "$dir" && bash -c "$prep") >/dev/null 2>&1
        t0=$(date +%s%N)
        (cd "$dir" && bash -c "$cmd") >/dev/null 2>"$WORK/err" || {
            cat "$WORK/err" >&2
            exit 1
        }
        t1=$(date +%s%N)
        all+=("$(((t1 - t0) / 1000))")
    done
    printf '%s\n' "${all[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}

echo
echo "bsi over ssh, $(nproc) cores, median of $RUNS runs"
echo
echo "| link | command | new connection each time | shared connection | saved |"
echo "|---|---|---|---|---|"
for link in loopback "30 ms"; do
    port=$PORT
    [[ $link == "30 ms" ]] && port=$SLOW
    url="ssh://$USER_NAME@127.0.0.1:$port$WORK/brain.git"
    rm -rf "$WORK/clone"
    GIT_SSH_COMMAND="$SSH_BASE" git clone -q "$url" "$WORK/clone"
    reset="git -C $WORK/brain.git update-ref refs/heads/brain-index $BASE && git update-ref refs/remotes/origin/brain-index $BASE && git update-ref refs/heads/brain-index $BASE && git for-each-ref --format='delete %(refname)' refs/bsi/seen/ | git update-ref --stdin"
    for what in open status; do
        case $what in
        open) cmd="$BSI open notes/ --session sess-ssh -q" ;;
        status) cmd="$BSI status -q" ;;
        esac
        plain=$(GIT_SSH_COMMAND="$SSH_BASE" median_ms "$WORK/clone" "$cmd" "$reset")
        # The first shared run opens the master connection; it is not counted.
        (cd "$WORK/clone" && GIT_SSH_COMMAND="$SSH_BASE $SHARED" git ls-remote -q origin >/dev/null)
        shared=$(GIT_SSH_COMMAND="$SSH_BASE $SHARED" median_ms "$WORK/clone" "$cmd" "$reset")
        saved=$(awk -v a="$plain" -v b="$shared" 'BEGIN { printf "%.1f ms (%.0f%%)", a - b, 100 * (a - b) / a }')
        echo "| $link | bsi $what | $plain ms | $shared ms | $saved |"
    done
    ssh -o ControlPath="$WORK/cm-%C" -O exit -p "$port" "$USER_NAME@127.0.0.1" 2>/dev/null || true
done
