//! Walker-delta shells: `planes` circular orbits with ascending nodes spread evenly over 360
//! degrees, `per_plane` satellites evenly spaced in each, and a phasing F that offsets the
//! satellites of plane p by p * F * 360 / T degrees (T = planes x per_plane), the notation
//! i:T/P/F of Walker (1984), "Satellite constellations", J. Br. Interplanet. Soc. 37.
//!
//! Orbits are two-body circular orbits propagated analytically: the argument of latitude
//! grows at the mean motion n = sqrt(mu / a^3). Not modelled: J2 nodal regression (about
//! -4.6 degrees per day at 550 km and 53 degrees, i.e. 0.05 degree over a 15-minute run) and
//! drag; a TLE set propagated with SGP4 ([`super::tle`]) has both.
//!
//! Satellite index: `plane * per_plane + slot`. At the epoch (t = 0) the inertial frame and
//! ECEF coincide; plane 0's ascending node is at longitude 0.

use super::{rad, Vec3, EARTH_RADIUS_KM, EARTH_ROTATION_RAD_S, MU_KM3_S2};
use std::f64::consts::PI;

/// A Walker-delta shell i:T/P/F at one altitude.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkerShell {
    pub altitude_km: f64,
    pub inclination_deg: f64,
    pub planes: u32,
    pub per_plane: u32,
    /// Walker's F, in 0..planes.
    pub phasing: u32,
}

impl WalkerShell {
    /// Starlink shell 1 as filed with the FCC (SpaceX, 2019 modification, IBFS
    /// SAT-MOD-20190830-00087): 72 planes of 22 satellites at 550 km, 53 degrees. The filing
    /// gives no phasing; we take F = 1.
    pub fn starlink_shell1() -> Self {
        WalkerShell { altitude_km: 550.0, inclination_deg: 53.0, planes: 72, per_plane: 22, phasing: 1 }
    }

    pub fn len(&self) -> usize {
        (self.planes * self.per_plane) as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Orbital radius, km.
    pub fn radius_km(&self) -> f64 {
        EARTH_RADIUS_KM + self.altitude_km
    }

    /// Mean motion, rad/s: n = sqrt(mu / a^3).
    pub fn mean_motion(&self) -> f64 {
        let a = self.radius_km();
        libm::sqrt(MU_KM3_S2 / (a * a * a))
    }

    /// Orbital period, s.
    pub fn period_s(&self) -> f64 {
        2.0 * PI / self.mean_motion()
    }

    /// Right ascension of the ascending node of `plane`, rad.
    fn raan(&self, plane: u32) -> f64 {
        2.0 * PI * plane as f64 / self.planes as f64
    }

    /// Argument of latitude of (plane, slot) at the epoch, rad.
    fn u0(&self, plane: u32, slot: u32) -> f64 {
        let t = (self.planes * self.per_plane) as f64;
        2.0 * PI * slot as f64 / self.per_plane as f64 + 2.0 * PI * (self.phasing as f64) * plane as f64 / t
    }

    /// Inertial position of (plane, slot) at `t_s`, km.
    pub fn position_inertial(&self, plane: u32, slot: u32, t_s: f64) -> Vec3 {
        let u = self.u0(plane, slot) + self.mean_motion() * t_s;
        let (raan, inc) = (self.raan(plane), rad(self.inclination_deg));
        let (su, cu) = (libm::sin(u), libm::cos(u));
        let (so, co) = (libm::sin(raan), libm::cos(raan));
        let (si, ci) = (libm::sin(inc), libm::cos(inc));
        let a = self.radius_km();
        Vec3::new(a * (cu * co - su * ci * so), a * (cu * so + su * ci * co), a * su * si)
    }

    /// ECEF positions of every satellite at `t_s` (the Earth has turned by omega * t).
    pub fn positions_ecef(&self, t_s: f64, out: &mut Vec<Vec3>) {
        out.clear();
        let theta = EARTH_ROTATION_RAD_S * t_s;
        for p in 0..self.planes {
            for s in 0..self.per_plane {
                out.push(self.position_inertial(p, s, t_s).rot_z(-theta));
            }
        }
    }

    /// The +Grid: each satellite links to the one ahead in its plane and to the satellite of
    /// the same slot in the next plane (so, both ways, to four neighbours). Seam rule: the
    /// last plane links to plane 0 with the slot shifted by F, (P-1, s) -- (0, (s+F) mod S),
    /// which is the satellite whose phase differs by the same 2 pi F / T as every other
    /// inter-plane pair (plane P would be plane 0 advanced by F slots). A Walker delta spreads
    /// its nodes over 360 degrees, so neighbouring planes at the seam move the same way and
    /// the seam needs no counter-rotating exception. Each undirected link appears once, as
    /// (lower index, higher index) in a fixed order.
    pub fn plus_grid(&self) -> Vec<(u32, u32)> {
        let (np, ns) = (self.planes, self.per_plane);
        let id = |p: u32, s: u32| p * ns + s;
        let mut links = Vec::with_capacity(2 * self.len());
        for p in 0..np {
            for s in 0..ns {
                if ns > 2 || (ns == 2 && s == 0) {
                    links.push(ordered(id(p, s), id(p, (s + 1) % ns)));
                }
                if np > 2 || (np == 2 && p == 0) {
                    let (q, t) = if p + 1 == np { (0, (s + self.phasing) % ns) } else { (p + 1, s) };
                    links.push(ordered(id(p, s), id(q, t)));
                }
            }
        }
        links
    }
}

fn ordered(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::deg;

    #[test]
    fn starlink_shell1_period_is_95_5_minutes() {
        // Kepler's third law at a = 6921 km: T = 2 pi sqrt(a^3 / mu) = 5730.1 s.
        let w = WalkerShell::starlink_shell1();
        assert_eq!(w.len(), 1584);
        assert!((w.period_s() - 5730.1).abs() < 0.1, "{}", w.period_s());
    }

    #[test]
    fn orbits_are_circular_and_reach_the_inclination() {
        let w = WalkerShell::starlink_shell1();
        let mut max_lat: f64 = 0.0;
        for k in 0..2000 {
            let p = w.position_inertial(5, 3, k as f64 * 3.0);
            assert!((p.norm() - 6921.0).abs() < 1e-6);
            max_lat = max_lat.max(deg(libm::asin(p.z / p.norm())));
        }
        assert!((max_lat - 53.0).abs() < 0.01, "{max_lat}");
    }

    #[test]
    fn earth_rotation_moves_the_ground_track_west() {
        // One orbit later a satellite is back at the same inertial point, but the Earth has
        // turned by omega * T: 0.4180 rad = 23.95 degrees of longitude.
        let w = WalkerShell::starlink_shell1();
        let mut a = Vec::new();
        let mut b = Vec::new();
        w.positions_ecef(0.0, &mut a);
        w.positions_ecef(w.period_s(), &mut b);
        let lon = |v: Vec3| deg(libm::atan2(v.y, v.x));
        let shift = lon(a[0]) - lon(b[0]);
        assert!((shift - deg(EARTH_ROTATION_RAD_S * w.period_s())).abs() < 1e-6, "{shift}");
        assert!((shift - 23.95).abs() < 0.01);
    }

    #[test]
    fn plus_grid_gives_every_satellite_four_neighbours() {
        let w = WalkerShell::starlink_shell1();
        let g = w.plus_grid();
        assert_eq!(g.len(), 2 * 1584);
        let mut degree = vec![0; w.len()];
        for &(a, b) in &g {
            assert!(a < b);
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        assert!(degree.iter().all(|&d| d == 4));
        // The seam: (71, 21) links to (0, (21 + 1) mod 22) = (0, 0).
        assert!(g.contains(&(0, 71 * 22 + 21)));
    }

    #[test]
    fn seam_links_are_as_long_as_the_others() {
        // With the seam rule, every inter-plane link at the epoch has the same phase offset,
        // so at t = 0 the seam links have the same length distribution as the others: the
        // longest seam link is no longer than the longest non-seam inter-plane link.
        let w = WalkerShell::starlink_shell1();
        let mut pos = Vec::new();
        w.positions_ecef(0.0, &mut pos);
        let (mut seam, mut other) = (0.0f64, 0.0f64);
        for (a, b) in w.plus_grid() {
            let (pa, pb) = (a / 22, b / 22);
            if pa == pb {
                continue;
            }
            let d = pos[a as usize].dist(pos[b as usize]);
            if pa == 0 && pb == 71 {
                seam = seam.max(d);
            } else {
                other = other.max(d);
            }
        }
        assert!(seam <= other + 1e-6, "seam {seam} km, others {other} km");
    }
}
