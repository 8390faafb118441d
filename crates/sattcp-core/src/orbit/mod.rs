//! Constellation geometry: where satellites are, what a ground station sees, and the path a
//! packet takes between two ground stations at each reconfiguration step.
//!
//! Earth model: a sphere of radius 6371 km (the mean radius) rotating at the sidereal rate
//! about its polar axis. Why a sphere and not WGS-84: the published figures we check against
//! (4h/c bent-pipe RTT at zenith, 15 ms at 25 degrees elevation, visibility cones) are
//! defined on a sphere, and WGS-84's geocentric radius differs from 6371 km by at most
//! 14.4 km (6378.1 km at the equator, 6356.8 km at the poles): at most 0.05 ms of one-way
//! delay on a 550 km slant, less than the delay change of one second of orbital motion.
//! Earth rotation is included (it moves the ground stations under the orbits, so the
//! satellite each one sees changes); polar motion, nutation and UT1-UTC are not.
//!
//! Positions are in an Earth-centred, Earth-fixed (ECEF) frame, in kilometres, at a time
//! given in seconds since the constellation's epoch. All maths is `libm` (STYLE.md,
//! "Determinism"): the same positions, hence the same nanosecond delays, on every machine.
//!
//! - [`walker`]: Walker-delta shells, circular orbits propagated analytically;
//! - [`tle`]: TLE sets propagated with SGP4 (the `sgp4` crate), TEME -> ECEF with GMST;
//! - [`route`]: ground stations, visibility, +Grid inter-satellite links, shortest paths by
//!   propagation delay, and the piecewise path between two ground stations.

pub mod route;
pub mod tle;
pub mod walker;

use std::f64::consts::PI;

/// Mean Earth radius, km (IUGG mean radius R1 = 6371.0088 km, rounded as in the LEO
/// literature, e.g. Handley 2018 and Hypatia, Kassing et al. 2020).
pub const EARTH_RADIUS_KM: f64 = 6371.0;
/// Earth's gravitational parameter, km^3/s^2 (WGS-84 / EGM-96 GM).
pub const MU_KM3_S2: f64 = 398_600.441_8;
/// Earth's sidereal rotation rate, rad/s (IERS: 7.292115e-5; WGS-84 7.2921151467e-5).
pub const EARTH_ROTATION_RAD_S: f64 = 7.292_115_146_7e-5;
/// Speed of light in vacuum, km/s (exact by the SI definition of the metre). Radio links and
/// laser inter-satellite links both travel at c (vacuum); ground fibre is not modelled here.
pub const C_KM_S: f64 = 299_792.458;

/// A vector in kilometres (ECEF or inertial).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl Vec3 {
    pub const fn new(x: f64, y: f64, z: f64) -> Self {
        Vec3 { x, y, z }
    }
    #[inline]
    pub fn minus(self, o: Vec3) -> Vec3 {
        Vec3::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
    #[inline]
    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    #[inline]
    pub fn norm(self) -> f64 {
        libm::sqrt(self.dot(self))
    }
    #[inline]
    pub fn dist(self, o: Vec3) -> f64 {
        self.minus(o).norm()
    }
    /// Rotation by `angle` (radians) about the z axis.
    #[inline]
    pub fn rot_z(self, angle: f64) -> Vec3 {
        let (s, c) = (libm::sin(angle), libm::cos(angle));
        Vec3::new(c * self.x - s * self.y, s * self.x + c * self.y, self.z)
    }
}

/// Degrees to radians.
#[inline]
pub fn rad(deg: f64) -> f64 {
    deg * PI / 180.0
}

/// Degrees from radians.
#[inline]
pub fn deg(rad: f64) -> f64 {
    rad * 180.0 / PI
}

/// A point on (or above) the spherical Earth.
#[derive(Clone, Debug, PartialEq)]
pub struct GroundStation {
    pub name: String,
    /// Geocentric latitude and longitude, degrees (north and east positive).
    pub lat_deg: f64,
    pub lon_deg: f64,
    /// Height above the sphere, km.
    pub alt_km: f64,
}

impl GroundStation {
    pub fn new(name: &str, lat_deg: f64, lon_deg: f64) -> Self {
        GroundStation { name: name.into(), lat_deg, lon_deg, alt_km: 0.0 }
    }

    /// ECEF position, km.
    pub fn ecef(&self) -> Vec3 {
        let (phi, lam) = (rad(self.lat_deg), rad(self.lon_deg));
        let r = EARTH_RADIUS_KM + self.alt_km;
        Vec3::new(r * libm::cos(phi) * libm::cos(lam), r * libm::cos(phi) * libm::sin(lam), r * libm::sin(phi))
    }
}

/// Elevation of `sat` above the local horizon of a ground point at `gs` (both ECEF), radians.
/// The local vertical is radial (spherical Earth).
#[inline]
pub fn elevation(gs: Vec3, sat: Vec3) -> f64 {
    let d = sat.minus(gs);
    let up = gs.dot(d) / (gs.norm() * d.norm());
    libm::asin(up.clamp(-1.0, 1.0))
}

/// Slant range from a ground point to a satellite at `alt_km` seen at elevation `elev_rad`,
/// km: the law of cosines in the triangle (Earth centre, ground point, satellite),
/// d = sqrt((R+h)^2 - R^2 cos^2 e) - R sin e.
pub fn slant_range_km(alt_km: f64, elev_rad: f64) -> f64 {
    let r = EARTH_RADIUS_KM;
    let rc = r * libm::cos(elev_rad);
    libm::sqrt((r + alt_km) * (r + alt_km) - rc * rc) - r * libm::sin(elev_rad)
}

/// One-way propagation delay over `km` at the speed of light, rounded to the nanosecond.
#[inline]
pub fn delay_ns(km: f64) -> u64 {
    libm::round(km * 1e9 / C_KM_S) as u64
}

/// Where the satellites of a constellation are.
pub enum Constellation {
    Walker(walker::WalkerShell),
    Tle(tle::TleSet),
}

impl Constellation {
    pub fn len(&self) -> usize {
        match self {
            Constellation::Walker(w) => w.len(),
            Constellation::Tle(t) => t.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// ECEF positions (km) of every satellite, `t_s` seconds after the epoch, into `out`.
    pub fn positions_ecef(&self, t_s: f64, out: &mut Vec<Vec3>) {
        match self {
            Constellation::Walker(w) => w.positions_ecef(t_s, out),
            Constellation::Tle(t) => t.positions_ecef(t_s, out),
        }
    }
    /// The +Grid of inter-satellite links, when the constellation has planes and slots.
    pub fn grid(&self) -> Option<Vec<(u32, u32)>> {
        match self {
            Constellation::Walker(w) => Some(w.plus_grid()),
            Constellation::Tle(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zenith_is_ninety_degrees_and_slant_is_altitude() {
        let gs = GroundStation::new("g", 48.0, 2.0).ecef();
        let up = gs.minus(Vec3::new(0.0, 0.0, 0.0));
        let sat = Vec3::new(up.x * (1.0 + 550.0 / EARTH_RADIUS_KM), up.y * (1.0 + 550.0 / EARTH_RADIUS_KM), up.z * (1.0 + 550.0 / EARTH_RADIUS_KM));
        assert!((deg(elevation(gs, sat)) - 90.0).abs() < 1e-6);
        assert!((gs.dist(sat) - 550.0).abs() < 1e-9);
        assert!((slant_range_km(550.0, rad(90.0)) - 550.0).abs() < 1e-9);
    }

    #[test]
    fn slant_range_at_25_degrees_from_the_triangle() {
        // Place a satellite at 550 km and 25 degrees elevation by construction: its Earth
        // central angle is lambda = 90 - e - asin(R cos e / (R + h)).
        let (r, h, e) = (EARTH_RADIUS_KM, 550.0, rad(25.0));
        let lambda = PI / 2.0 - e - libm::asin(r * libm::cos(e) / (r + h));
        let gs = Vec3::new(r, 0.0, 0.0);
        let sat = Vec3::new((r + h) * libm::cos(lambda), (r + h) * libm::sin(lambda), 0.0);
        assert!((deg(elevation(gs, sat)) - 25.0).abs() < 1e-9);
        let d = slant_range_km(h, e);
        assert!((gs.dist(sat) - d).abs() < 1e-6, "{} vs {d}", gs.dist(sat));
        // 1123.3 km: between the altitude and the horizon distance sqrt((R+h)^2 - R^2).
        assert!((d - 1123.28).abs() < 0.01, "{d}");
    }

    #[test]
    fn delay_rounds_to_the_nanosecond() {
        assert_eq!(delay_ns(C_KM_S), 1_000_000_000);
        assert_eq!(delay_ns(550.0), 1_834_603); // 550 km / c = 1.8346025 ms
    }
}
