"""Plot cwnd and ssthresh versus time for each TCP flavour on scenarios/geo-three-losses.toml
(three segments of one window dropped, k = 3), for docs/tcp.md.

    .venv/bin/python scripts/plot_cwnd.py [--out docs/img/cwnd_k3.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from matplotlib.figure import Figure

import sattcp
from sattcp.errors import OutputPathError
from sattcp.paths import check_file, check_folder

ROOT = Path(__file__).resolve().parents[1]
FLAVOURS = ["vanilla", "reno", "newreno", "sack", "newreno_rfc6582", "sack_rfc6675"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(ROOT / "docs/img/cwnd_k3.png"))
    args = ap.parse_args()
    out = Path(args.out)
    try:  # before the simulations: a minute's work would be lost at savefig
        if out.parent.is_dir():
            check_file(out, "--out")
        else:  # created below
            check_folder(out.parent, f"--out {out}: its folder")
    except OutputPathError as e:
        print(f"plot_cwnd.py: error: {e}", file=sys.stderr)
        return 2
    fig = Figure(figsize=(10, 9), layout="constrained")
    axes = fig.subplots(3, 2, sharex=True)
    for ax, flavour in zip(axes.flat, FLAVOURS, strict=False):
        r = sattcp.run(ROOT / "scenarios/geo-three-losses.toml", overrides={"tcp.flavor": flavour})
        tr = r.traces
        f = r.flows.iloc[0]
        for name, style in (("cwnd", "-"), ("ssthresh", "--")):
            t = tr[f"flow/0/{name}"]
            # Step plot: each value holds until the next change.
            ax.step(t.t, t.value / 9180, style, where="post", label=name)
        ax.set_title(f"{flavour}: {int(f.timeouts)} timeout(s), {int(f.fast_retransmits)} fast retransmit(s)")
        ax.set_ylabel("segments")
        ax.set_xlim(0, 8)
        ax.set_ylim(0, 500)
        ax.legend(loc="upper left")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("45 Mbps GEO path, segments 200, 203 and 206 dropped (k = 3)")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
