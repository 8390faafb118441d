"""Writes scenarios/tle/fixture.tle: a small TLE set for tests and the GEO reference scenario.

- 00005: the published SGP4 test TLE (Vallado et al. 2006, "Revisiting Spacetrack Report #3",
  AIAA 2006-6753, SGP4-VER.TLE), checked against its published positions in orbit/tle.rs;
- ISS (ZARYA): the TLE of the `sgp4` crate's documentation (2008);
- STARLINK-LIKE-00..21: synthetic, one plane of a 550 km, 53 degree shell (Walker slot spacing);
- GEO-13E, GEO-36E, GEO-34W: synthetic geostationary satellites placed over those longitudes
  at the epoch 2024-01-01T00:00:00Z (mean anomaly = GMST + longitude, circular, equatorial).

Run: python3 scripts/make_tle_fixture.py  (deterministic; no network).
"""

from __future__ import annotations

import math
from pathlib import Path

EPOCH_YYDDD = "24001.00000000"  # 2024-01-01T00:00:00Z
JD_EPOCH = 2460310.5
MU = 398600.4418  # km^3/s^2
R_EARTH = 6371.0


def checksum(line: str) -> int:
    return sum(int(c) if c.isdigit() else (1 if c == "-" else 0) for c in line) % 10


def with_checksum(body: str) -> str:
    assert len(body) == 68, (len(body), body)
    return body + str(checksum(body))


def gmst_deg(jd: float) -> float:
    # IAU-82 (Vallado eq. 3-47), as orbit/tle.rs computes it.
    t = (jd - 2451545.0) / 36525.0
    secs = 67310.54841 + (876600.0 * 3600.0 + 8640184.812866) * t + 0.093104 * t * t - 6.2e-6 * t**3
    return (secs * 360.0 / 86400.0) % 360.0


def tle(num: int, intl: str, inc: float, raan: float, ecc: float, argp: float, m: float, n: float) -> tuple[str, str]:
    l1 = f"1 {num:05d}U {intl:<8} {EPOCH_YYDDD}  .00000000  00000-0  00000-0 0  999"
    e = f"{ecc:.7f}"[2:]
    l2 = f"2 {num:05d} {inc:8.4f} {raan % 360:8.4f} {e} {argp:8.4f} {m % 360:8.4f} {n:11.8f}    1"
    return with_checksum(l1), with_checksum(l2)


def main() -> None:
    out = [
        "00005",
        "1 00005U 58002B   00179.78495062  .00000023  00000-0  28098-4 0  4753",
        "2 00005  34.2682 348.7242 1859667 331.7664  19.3264 10.82419157413667",
        "ISS (ZARYA)",
        "1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927",
        "2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537",
    ]
    a = R_EARTH + 550.0
    n_leo = 86400.0 / (2 * math.pi * math.sqrt(a**3 / MU))  # rev/day
    for s in range(22):
        l1, l2 = tle(90000 + s, "24001A", 53.0, 0.0, 0.0001, 0.0, 360.0 * s / 22, n_leo)
        out += [f"STARLINK-LIKE-{s:02d}", l1, l2]
    g = gmst_deg(JD_EPOCH)
    for k, (name, lon) in enumerate([("GEO-13E", 13.0), ("GEO-36E", 36.0), ("GEO-34W", -34.0)]):
        l1, l2 = tle(91000 + k, "24001B", 0.0, 0.0, 0.0002, 0.0, g + lon, 1.00273791)
        out += [name, l1, l2]
    for i in range(0, len(out)):
        line = out[i]
        if line.startswith(("1 ", "2 ")):
            assert checksum(line[:68]) == int(line[68]), line
    Path(__file__).resolve().parent.parent.joinpath("scenarios/tle/fixture.tle").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
