#!/usr/bin/env bash
# A real one-node Slurm cluster on this machine (Debian's slurm-wlm and munge, run as root):
# submits a sweep as a job array with `simrob batch --slurm`, waits for it, merges it with
# `simrob batch collect` and checks the merged results equal a local run of the same sweep.
# Usage (as root): .ci/slurm.sh PATH/TO/simrob
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
simrob_bin slurm "$1"
[ "$(id -u)" = 0 ] || { echo "slurm: needs root (it starts munged, slurmctld and slurmd)" >&2; exit 1; }
fail() { echo "slurm: $*" >&2; for f in /var/log/slurmctld.log /var/log/slurmd.log; do [ -f "$f" ] && tail -n 30 "$f" >&2; done; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm: installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

# munge: a key, then the daemon as its own user.
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
if ! pgrep -x munged >/dev/null; then
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start"
fi
timeout 20 bash -c 'until munge -n | unmunge >/dev/null 2>&1; do sleep 0.2; done' || fail "munge does not work"

# One node, this machine, under the name localhost.
cpus="$(nproc)"
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=simrob-ci
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd.log
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
NodeName=localhost CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x slurmctld >/dev/null || slurmctld || fail "slurmctld did not start"
pgrep -x slurmd >/dev/null || slurmd -N localhost || fail "slurmd did not start"
timeout 60 bash -c 'until sinfo -h -N -o %t 2>/dev/null | grep -qE "^(idle|mix|alloc)"; do scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true; sleep 0.5; done' \
  || fail "the node never became idle: $(sinfo -N 2>&1)"

# The same sweep twice: on the cluster (8+ runs, 2 per array task, at most 3 tasks at once) and here.
work="$(mktemp -d)"
sweep="$work/sweep.toml"
cat > "$sweep" <<SWEEP
name = "ci-drones"
command = ["swarm", "run", "scenarios/swarm/drone-swarm.toml", "--robots", "{robots}",
           "--seed", "{seed}", "--duration", "10", "--json", "--quiet"]
seeds = [1, 2]
metrics = ["arrived", "crashed", "collisions", "events"]
timeout = 120
[parameters]
robots = [20, 40, 80, 160, 320]
SWEEP
"$bin" batch "$sweep" --out "$work/cluster" --slurm --chunk-size 2 --max-parallel 3 --partition ci --time 00:10:00 --mem 200M
job="$(sbatch --parsable "$work/cluster/sweep.sbatch")" || fail "sbatch refused the job array"
echo "slurm: submitted job array $job"
# Wait for every array task to leave the queue, then check they all completed.
timeout 600 bash -c "while squeue -h -j '$job' 2>/dev/null | grep -q .; do sleep 1; done" || fail "job $job still queued after 600 s: $(squeue -j "$job")"
"$bin" batch collect "$work/cluster"
"$bin" batch "$sweep" --out "$work/local" --quiet
# Equal except the wall time of each run.
strip() { python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); i=r[0].index("wall_s"); [print(",".join(x[:i]+x[i+1:])) for x in r]' "$1"; }
rows="$(($(wc -l < "$work/local/results.csv") - 1))"
[ "$rows" -ge 8 ] || fail "the local sweep has $rows rows, expected 10"
if ! diff <(strip "$work/cluster/results.csv") <(strip "$work/local/results.csv"); then
  cat "$work"/cluster/slurm/*.out >&2 || true
  fail "the cluster's merged results differ from the local run"
fi
grep -q ',failed,\|,timeout,' "$work/local/results.csv" && fail "some runs failed: $(grep -E ',failed,|,timeout,' "$work/local/results.csv")"
echo "slurm: $rows runs as a job array on a one-node cluster equal the local run"
rm -rf "$work"
