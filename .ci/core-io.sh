#!/usr/bin/env bash
# The core crates do no I/O: no sockets, files, threads or clocks (see ARCHITECTURE.md,
# "Invariants of absence"). Shells (crates/server, crates/mrs, crates/viewer, crates/cli)
# do. This check reads each core crate's non-test source (a file up to its first
# `#[cfg(test)]`) and fails on any use of those, except the exceptions listed below.
set -euo pipefail
cd "$(dirname "$0")/.."

CORE="math protocol physics world session flat swarm soccer futrob coord record"
# Sockets, files, threads, clocks (reading the wall clock; `Instant` values handed in are fine).
PATTERN='UdpSocket|TcpStream|TcpListener|UnixStream|std::fs|fs::(read|write|File|create|remove|rename|metadata|OpenOptions)|File::(open|create)|OpenOptions|std::thread|thread::(spawn|scope|sleep)|Instant::now|SystemTime::now|std::process|tokio|mio::|std::io::stdin|std::io::stdout'
# Documented exceptions, as `path:pattern` (a line of that file matching the pattern):
# - the swarm splits proximity, collision, drone-control, movement and grid work into parts
#   (as many as `SimConfig::threads`, by default the machine's cores: sim.rs asks how many)
#   run on a rayon pool of that many threads kept for the process (par.rs; no `std::thread`
#   there: it asks which process it is in, so a forked child builds pools of its own); each
#   part writes only its own robots or grid slots, so results do not depend on the thread
#   count;
# - simrob-physics' opt-in `parallel` feature steps a world asked for several threads on a
#   rayon pool of its own (rapier's parallel step, the same run at any thread count; no
#   `std::thread` here, so no exception is needed: ARCHITECTURE.md says so);
# - the swarm's scenario loader reads the scenario file and the map files it names (a
#   regular file within a size limit: its metadata first, then a bounded read);
# - the swarm's compact recorder (seer.rs) encodes and writes snapshots on a thread of its
#   own, so the simulation never waits on the disk; the writer (a file, a pipe) is handed
#   in by the shell, which opens it; the run is the same with and without it (tested).
EXCEPTIONS=(
  'crates/swarm/src/par.rs:std::process::id'
  'crates/swarm/src/sim.rs:std::thread::available_parallelism'
  'crates/swarm/src/scenario.rs:std::fs::(read|metadata|File::open)'
  'crates/swarm/src/seer.rs:std::thread::(JoinHandle|Builder)'
)

found=0
for crate in $CORE; do
  [ -d "crates/$crate/src" ] || continue
  while IFS= read -r -d '' file; do
    while IFS= read -r hit; do
      line="${hit#*:}"
      excused=0
      for ex in "${EXCEPTIONS[@]}"; do
        if [ "${ex%%:*}" = "$file" ] && grep -Eq "${ex#*:}" <<<"$line"; then
          excused=1
        fi
      done
      if [ "$excused" = 0 ]; then
        echo "$file:$hit"
        found=1
      fi
    done < <(awk '/#\[cfg\(test\)\]/ { exit } { sub(/\/\/.*/, ""); print FNR ": " $0 }' "$file" | grep -E "$PATTERN" || true)
  done < <(find "crates/$crate/src" -name '*.rs' -print0)
done

if [ "$found" != 0 ]; then
  echo "core crates must do no I/O (sockets, files, threads, clocks): move it to a shell, or document an exception in .ci/core-io.sh" >&2
  exit 1
fi
echo "core crates: no sockets, files, threads or clocks (outside the documented exceptions)"
