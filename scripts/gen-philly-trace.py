#!/usr/bin/env python3
"""Writes a Philly-style job trace (job_id,submit_time,num_gpu,duration) with many
distinct large gangs, for replay-speed checks under a backlog:

    scripts/gen-philly-trace.py --seed 1 --gpus 128 > /tmp/gen-1.csv
    build/phalanx simulate --trace philly --jobs /tmp/gen-1.csv --cluster 16x8

The shared Philly virtual clusters (../shared/data/philly/) have a few gang sizes, so
the gangs that queue are mostly alike. Here a quarter of the jobs are large gangs whose
sizes are drawn from 9 to --max-gang GPUs (most not a multiple of the node size, so
their last pod differs), the rest 1-4 GPU jobs; arrivals are a Poisson process whose
rate offers --load times the cluster's GPUs (`--gpus`) in GPU-seconds, so that large
gangs queue behind small jobs. Durations are log-normal (median --median-s, sigma 1.2),
at least 600 s as in the shared traces. The same seed gives the same file.
"""
import argparse
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--jobs", type=int, default=3000)
    ap.add_argument("--gpus", type=int, default=128, help="GPUs of the cluster replayed on")
    ap.add_argument("--max-gang", type=int, default=128, help="largest gang, GPUs")
    ap.add_argument("--large-share", type=float, default=0.25)
    ap.add_argument("--load", type=float, default=1.3, help="offered GPU load / capacity")
    ap.add_argument("--median-s", type=float, default=3600.0)
    a = ap.parse_args()
    if a.jobs < 1 or a.gpus < 1 or a.max_gang < 9 or not 0 <= a.large_share <= 1:
        sys.exit("gen-philly-trace: --jobs, --gpus >= 1, --max-gang >= 9, 0 <= --large-share <= 1")
    rng = random.Random(a.seed)
    sigma = 1.2
    jobs = []
    for _ in range(a.jobs):
        if rng.random() < a.large_share:
            gpus = rng.randint(9, min(a.max_gang, a.gpus))
        else:
            gpus = rng.choice((1, 1, 1, 1, 2, 4))
        dur = max(600, int(a.median_s * math.exp(rng.gauss(0.0, sigma))))
        jobs.append((gpus, dur))
    mean_work = sum(g * d for g, d in jobs) / len(jobs)  # GPU-seconds per job
    rate = a.load * a.gpus / mean_work                      # jobs per second
    t = 0.0
    out = sys.stdout
    out.write("job_id,submit_time,num_gpu,duration\n")
    for i, (gpus, dur) in enumerate(jobs):
        out.write(f"{i},{int(t)},{gpus},{dur}\n")
        t += rng.expovariate(rate)


if __name__ == "__main__":
    main()
