#!/usr/bin/env bash
# A real two-node Slurm cluster on this machine (Debian's slurm-wlm and munge, run as root;
# each node a network namespace of its own):
# submits a sweep as a job array with `simrob batch --slurm`, waits for it, merges it with
# `simrob batch collect` and checks the merged results equal a local run of the same sweep.
# Usage (as root): .ci/slurm.sh PATH/TO/simrob
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib.sh
simrob_bin slurm "$1"
[ "$(id -u)" = 0 ] || { echo "slurm: needs root (it starts munged, slurmctld and slurmd)" >&2; exit 1; }
fail() { echo "slurm: $*" >&2; for f in /var/log/slurmctld.log /var/log/slurmd-*.log; do [ -f "$f" ] && tail -n 30 "$f" >&2; done; exit 1; }

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

# Two nodes on this machine: each a network namespace of this script's own, joined to this
# one by a veth pair (node1 at 10.213.1.2, node2 at 10.213.2.2; the controller answers at
# 10.213.1.1, which both reach through this machine), each running its own slurmd. They
# share this machine's filesystem, as a cluster's nodes share one. Where no namespace can be
# made (no CAP_NET_ADMIN, no veth), one node, this machine as localhost, as it says.
if ip -4 route show | grep -qE "^10\.213\.[12]\."; then
  echo "slurm: 10.213.1.0/24 or 10.213.2.0/24 is already in use here; this script's cluster needs them" >&2; exit 1
fi
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
  echo "slurm: Slurm daemons are already running here; this script starts a cluster of its own" >&2; exit 1
fi
nodes=(node1 node2)
teardown() {
  scontrol shutdown >/dev/null 2>&1 || true
  timeout 20 bash -c 'while pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; do sleep 0.2; done' || true
  for n in node1 node2; do
    ip netns del "simrob-slurm-$n" 2>/dev/null || true
    ip link del "srs-$n" 2>/dev/null || true
  done
}
trap teardown EXIT
wire_node() { # NAME INDEX: the namespace, its veth pair and addresses
  local n="$1" i="$2" ns="simrob-slurm-$1"
  ip netns add "$ns" &&
    ip link add "srs-$n" type veth peer name "srs-$n-p" &&
    ip link set "srs-$n-p" netns "$ns" &&
    ip addr add "10.213.$i.1/24" dev "srs-$n" &&
    ip link set "srs-$n" up &&
    ip -n "$ns" addr add "10.213.$i.2/24" dev "srs-$n-p" &&
    ip -n "$ns" link set "srs-$n-p" up &&
    ip -n "$ns" link set lo up &&
    ip -n "$ns" route add default via "10.213.$i.1"
}
if command -v nsenter >/dev/null && wire_node node1 1 2>/dev/null && wire_node node2 2 2>/dev/null; then
  ctl="localhost(10.213.1.1)"
  node_lines="NodeName=node1 NodeAddr=10.213.1.2 CPUs=CPUS RealMemory=1024 State=UNKNOWN
NodeName=node2 NodeAddr=10.213.2.2 CPUs=CPUS RealMemory=1024 State=UNKNOWN"
else
  echo "slurm: no network namespace can be made here (needs ip, nsenter, CAP_NET_ADMIN and veth): a one-node cluster, this machine" >&2
  teardown
  nodes=(localhost)
  ctl="localhost"
  node_lines="NodeName=localhost CPUs=CPUS RealMemory=1024 State=UNKNOWN"
fi
cpus="$(nproc)"
node_lines="${node_lines//CPUS/$cpus}"
node_list="$(IFS=,; echo "${nodes[*]}")"
for n in "${nodes[@]}"; do mkdir -p "/var/spool/slurmd/$n"; done
mkdir -p /etc/slurm /var/spool/slurmctld
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=simrob-ci
SlurmctldHost=$ctl
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
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd-%n.log
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
$node_lines
PartitionName=ci Nodes=$node_list Default=YES MaxTime=INFINITE State=UP
CONF
# -c: no jobs remembered from an earlier cluster.
slurmctld -c || fail "slurmctld did not start"
for n in "${nodes[@]}"; do
  if [ "$n" = localhost ]; then
    slurmd -N localhost || fail "slurmd did not start"
  else
    # nsenter: the node's network, this machine's filesystem (cgroups included).
    nsenter --net="/run/netns/simrob-slurm-$n" slurmd -N "$n" || fail "slurmd $n did not start"
  fi
done
export node_list want="${#nodes[@]}"
timeout 60 bash -c 'until [ "$(sinfo -h -N -o %t 2>/dev/null | grep -cE "^(idle|mix|alloc)")" = "$want" ]; do scontrol update nodename="$node_list" state=resume >/dev/null 2>&1 || true; sleep 0.5; done' \
  || fail "the nodes never became idle: $(sinfo -N 2>&1)"

# The same sweep twice: on the cluster (10 runs, 2 per array task, at most 3 tasks at once) and here.
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
# Slurm spread the array over every node (three tasks at once, two CPUs a node), and each
# task's log names the node it ran on.
ran_on="$(scontrol show job -o "$job" | grep -oE ' NodeList=[a-z0-9]+' | sed 's/.*=//' | sort -u | paste -sd ' ')"
[ "$ran_on" = "${nodes[*]}" ] || fail "the array did not run on every node (${nodes[*]}): $ran_on"
for n in "${nodes[@]}"; do
  grep -qs "on $n\$" "$work"/cluster/slurm/*.out || fail "no task's log says it ran on $n"
done
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
echo "slurm: $rows runs as a job array over a ${#nodes[@]}-node cluster (ran on $ran_on) equal the local run"
rm -rf "$work"
