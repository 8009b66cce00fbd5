"""PPO on ``simrob/SumBotBall-v0``: the SumBot learns to drive to the ball.

Proximal Policy Optimization (clipped objective, GAE, a Gaussian policy) written out in numpy,
so the example needs nothing beyond the package, gymnasium and numpy (matplotlib for the
figure). The worlds are stepped as a batch in Rust (``SumBotBallVectorEnv``: one call per
batch step). Each training seed gives a learning curve: the mean return, and the share of
episodes that reached the ball, of the episodes finished in each window of steps.

    python python/examples/ppo_sumbot.py --steps 300000 --seeds 1 2 3 \\
        --csv ppo.csv --plot ppo.png

prints a table (mean over the seeds per window) and writes one CSV row per seed and window.
``--steps 2000`` is a smoke run of a few seconds.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from typing import Optional

# The networks are small: a BLAS thread pool costs far more than it saves (15 times slower
# on a busy machine), so numpy's BLAS runs on one thread unless told otherwise.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import simrob.gym as sgym  # noqa: E402


def orthogonal(rng: np.random.Generator, shape: tuple[int, int], gain: float) -> np.ndarray:
    a = rng.standard_normal(shape)
    q, r = np.linalg.qr(a if shape[0] >= shape[1] else a.T)
    q = q * np.sign(np.diag(r))
    if shape[0] < shape[1]:
        q = q.T
    return gain * q[: shape[0], : shape[1]]


class Mlp:
    """tanh hidden layers, a linear output; ``params`` is the list Adam updates."""

    def __init__(self, sizes: list[int], rng: np.random.Generator, out_gain: float):
        self.params: list[np.ndarray] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            last = i == len(sizes) - 2
            self.params.append(orthogonal(rng, (a, b), out_gain if last else np.sqrt(2.0)))
            self.params.append(np.zeros(b))

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        acts = [x]
        n = len(self.params) // 2
        for i in range(n):
            x = x @ self.params[2 * i] + self.params[2 * i + 1]
            if i < n - 1:
                x = np.tanh(x)
            acts.append(x)
        return x, acts

    def backward(self, acts: list[np.ndarray], grad: np.ndarray) -> list[np.ndarray]:
        n = len(self.params) // 2
        grads: list[np.ndarray] = [np.empty(0)] * len(self.params)
        for i in reversed(range(n)):
            if i < n - 1:
                grad = grad * (1.0 - acts[i + 1] ** 2)
            grads[2 * i] = acts[i].T @ grad
            grads[2 * i + 1] = grad.sum(axis=0)
            grad = grad @ self.params[2 * i].T
        return grads


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float):
        self.params = params
        self.lr = lr
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray], max_norm: float = 0.5) -> None:
        norm = np.sqrt(sum(float((g * g).sum()) for g in grads))
        scale = min(1.0, max_norm / (norm + 1e-8))
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            g = g * scale
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mh = m / (1 - 0.9**self.t)
            vh = v / (1 - 0.999**self.t)
            p -= self.lr * mh / (np.sqrt(vh) + 1e-8)


class RunningNorm:
    """Observation normalization with running mean and variance (as VecNormalize does)."""

    def __init__(self, dim: int):
        self.mean = np.zeros(dim)
        self.var = np.ones(dim)
        self.count = 1e-4

    def update(self, x: np.ndarray) -> None:
        bm, bv, bc = x.mean(axis=0), x.var(axis=0), x.shape[0]
        delta = bm - self.mean
        tot = self.count + bc
        self.mean = self.mean + delta * bc / tot
        self.var = (self.var * self.count + bv * bc + delta**2 * self.count * bc / tot) / tot
        self.count = tot

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.clip((x - self.mean) / np.sqrt(self.var + 1e-8), -10.0, 10.0)


LOG2PI = np.log(2.0 * np.pi)


def train(
    seed: int,
    steps: int,
    num_envs: int = 16,
    n_steps: int = 128,
    epochs: int = 10,
    minibatch: int = 256,
    lr: float = 3e-4,
    gamma: float = 0.99,
    lam: float = 0.95,
    clip: float = 0.2,
    vf_coef: float = 0.5,
    window: int = 20_000,
    log=print,
) -> list[dict]:
    """Trains one policy; returns one row per window of ``window`` steps."""
    rng = np.random.default_rng(seed)
    # Same-step resets: a finished world's last observation is in infos["final_obs"], and the
    # observation returned is already the next episode's first.
    env = sgym.SumBotBallVectorEnv(num_envs=num_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    obs_dim = env.single_observation_space.shape[0]
    pi = Mlp([obs_dim, 64, 64, 2], rng, 0.01)
    vf = Mlp([obs_dim, 64, 64, 1], rng, 1.0)
    log_std = np.full(2, -0.5)
    pi_opt = Adam(pi.params + [log_std], lr)
    vf_opt = Adam(vf.params, lr)
    norm = RunningNorm(obs_dim)

    obs, _ = env.reset(seed=seed)
    ep_ret = np.zeros(num_envs)
    finished: list[tuple[int, float, bool]] = []  # (step, return, reached)
    rows: list[dict] = []
    done_steps = 0
    next_window = window
    t0 = time.process_time()
    B = num_envs * n_steps
    while done_steps < steps:
        b_obs = np.zeros((n_steps, num_envs, obs_dim))
        b_act = np.zeros((n_steps, num_envs, 2))
        b_logp = np.zeros((n_steps, num_envs))
        b_rew = np.zeros((n_steps, num_envs))
        b_done = np.zeros((n_steps, num_envs))
        b_val = np.zeros((n_steps + 1, num_envs))
        for t in range(n_steps):
            norm.update(obs)
            x = norm(obs)
            mu, _ = pi.forward(x)
            v, _ = vf.forward(x)
            std = np.exp(log_std)
            a = mu + std * rng.standard_normal(mu.shape)
            logp = (-0.5 * ((a - mu) / std) ** 2 - log_std - 0.5 * LOG2PI).sum(axis=1)
            nobs, rew, term, trunc, infos = env.step(np.clip(a, -1.0, 1.0))
            rew = np.asarray(rew, dtype=np.float64)
            ep_ret += rew
            done_steps += num_envs
            # A truncated episode is bootstrapped from its last observation's value.
            if trunc.any():
                fin = norm(np.stack(infos["final_obs"][trunc]))
                rew = rew.copy()
                rew[trunc] += gamma * vf.forward(fin)[0][:, 0]
            for i in np.flatnonzero(term | trunc):
                finished.append((done_steps, float(ep_ret[i]), bool(term[i] and rew[i] > 5.0)))
                ep_ret[i] = 0.0
            b_obs[t], b_act[t], b_logp[t], b_val[t] = x, a, logp, v[:, 0]
            b_rew[t], b_done[t] = rew, (term | trunc)
            obs = nobs
        b_val[n_steps] = vf.forward(norm(obs))[0][:, 0]
        adv = np.zeros((n_steps, num_envs))
        last = np.zeros(num_envs)
        for t in reversed(range(n_steps)):
            nonterm = 1.0 - b_done[t]
            delta = b_rew[t] + gamma * b_val[t + 1] * nonterm - b_val[t]
            last = delta + gamma * lam * nonterm * last
            adv[t] = last
        ret = (adv + b_val[:n_steps]).reshape(B)
        X = b_obs.reshape(B, obs_dim)
        A = b_act.reshape(B, 2)
        LP = b_logp.reshape(B)
        ADV = adv.reshape(B)
        for _ in range(epochs):
            order = rng.permutation(B)
            for s in range(0, B, minibatch):
                idx = order[s : s + minibatch]
                x, a, adv_b = X[idx], A[idx], ADV[idx]
                adv_b = (adv_b - adv_b.mean()) / (adv_b.std() + 1e-8)
                mu, acts = pi.forward(x)
                std = np.exp(log_std)
                z = (a - mu) / std
                logp = (-0.5 * z**2 - log_std - 0.5 * LOG2PI).sum(axis=1)
                ratio = np.exp(logp - LP[idx])
                clipped = ((adv_b > 0) & (ratio > 1 + clip)) | ((adv_b < 0) & (ratio < 1 - clip))
                # d(-mean surrogate)/d logp
                g = -np.where(clipped, 0.0, adv_b * ratio) / len(idx)
                g_mu = g[:, None] * (z / std)
                g_logstd = (g[:, None] * (z**2 - 1.0)).sum(axis=0)
                pi_opt.step(pi.backward(acts, g_mu) + [g_logstd])
                v, vacts = vf.forward(x)
                g_v = 2.0 * vf_coef * (v[:, 0] - ret[idx]) / len(idx)
                vf_opt.step(vf.backward(vacts, g_v[:, None]))
        while done_steps >= next_window or (done_steps >= steps and next_window - window < steps):
            lo = next_window - window
            inside = [(r, ok) for (s, r, ok) in finished if lo < s <= next_window]
            row = {
                "seed": seed,
                "steps": min(next_window, done_steps),
                "episodes": len(inside),
                "mean_return": float(np.mean([r for r, _ in inside])) if inside else float("nan"),
                "reached": float(np.mean([ok for _, ok in inside])) if inside else float("nan"),
                "cpu_s": time.process_time() - t0,
            }
            rows.append(row)
            log(
                f"seed {seed} steps {row['steps']:>8} episodes {row['episodes']:>4} "
                f"mean return {row['mean_return']:7.2f} reached {row['reached']:.2f} "
                f"cpu {row['cpu_s']:.0f} s"
            )
            next_window += window
    env.close()
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=300_000, help="environment steps per seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="training seeds")
    ap.add_argument("--num-envs", type=int, default=16, help="worlds stepped as one batch")
    ap.add_argument("--window", type=int, default=20_000,
                    help="steps per point of the learning curve")
    ap.add_argument("--csv", help="write one row per seed and window to this CSV file")
    ap.add_argument("--plot", help="draw the learning curves to this PNG (needs matplotlib)")
    args = ap.parse_args(argv)
    if args.steps <= 0 or args.window <= 0 or args.num_envs <= 0:
        ap.error("--steps, --window and --num-envs must be positive")
    all_rows: list[dict] = []
    for seed in args.seeds:
        all_rows += train(seed, args.steps, num_envs=args.num_envs, window=args.window)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(all_rows[0]))
            w.writeheader()
            w.writerows(all_rows)
    windows = sorted({r["steps"] for r in all_rows})
    print("\n| steps | mean return (mean over seeds) | min–max over seeds | reached the ball |")
    print("| ---: | ---: | ---: | ---: |")
    for s in windows:
        at = [r for r in all_rows if r["steps"] == s and r["episodes"] > 0]
        if not at:
            continue
        m = [r["mean_return"] for r in at]
        ok = np.mean([r["reached"] for r in at])
        print(f"| {s:,} | {np.mean(m):.1f} | {min(m):.1f} – {max(m):.1f} | {ok:.0%} |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
        for seed in args.seeds:
            rs = [r for r in all_rows if r["seed"] == seed and r["episodes"] > 0]
            ax.plot([r["steps"] for r in rs], [r["mean_return"] for r in rs], marker="o",
                    ms=3, label=f"seed {seed}")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(f"mean episode return (per {args.window:,} steps)")
        ax.set_title("PPO on simrob/SumBotBall-v0")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
