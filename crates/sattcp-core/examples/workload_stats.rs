//! Measures the WWW workload alone (no network): mean file size and offered load of the seeds'
//! 100 client/server pairs over 100 s, for several seeds, against the analytic values; writes
//! every request to a CSV, and the figures to `summary.json` beside it, for
//! `scripts/plot_workload.py`.
//!
//!     cargo run -p sattcp-core --example workload_stats -- [--seeds 20] [--servers 100]
//!         [--duration 100] [--out target/workload/requests.csv]
//!
//! A request is counted in a run's load if the client sends it before the run ends (the
//! server, infinitely fast, schedules the file the moment the request arrives).

use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use sattcp_core::app::www::{WwwClient, WwwParams, WwwServer};
use sattcp_core::engine::rng::RngFactory;
use sattcp_core::SimTime;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut seeds = 20u64;
    let mut servers = 100usize;
    let mut duration = 100u64;
    let mut out = PathBuf::from("target/workload/requests.csv");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--seeds" => seeds = value()?.parse()?,
            "--servers" => servers = value()?.parse()?,
            "--duration" => duration = value()?.parse()?,
            "--out" => out = PathBuf::from(value()?),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let end = SimTime::from_secs(duration);
    let params = WwwParams {
        stop_at: Some(end),
        ..WwwParams::default()
    };
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir)?;
    }
    let mut csv = BufWriter::new(fs::File::create(&out)?);
    writeln!(csv, "seed,server,time_s,batch,index,class,size_index,bytes")?;

    let (mut files, mut bytes) = (0u64, 0u128);
    let mut run_loads = Vec::new();
    for seed in 1..=seeds {
        let rngs = RngFactory::new(seed);
        let mut run_bytes = 0u64;
        for i in 0..servers {
            let mut client = WwwClient::for_index(&params, &rngs, i);
            let mut server = WwwServer::for_index(&params, &rngs, i);
            while let Some(t) = client.next_request_at().filter(|&t| t < end) {
                let r = client.pop_request(t).expect("due");
                let f = server.draw_file();
                writeln!(
                    csv,
                    "{seed},{i},{:.9},{},{},{},{},{}",
                    r.at.as_secs_f64(),
                    r.batch,
                    r.index,
                    f.class,
                    f.index,
                    f.bytes
                )?;
            }
            files += server.requests_served();
            bytes += server.scheduled_bytes() as u128;
            run_bytes += server.scheduled_bytes();
        }
        run_loads.push(run_bytes as f64 * 8.0 / end.as_secs_f64());
    }
    csv.flush()?;

    let n = run_loads.len() as f64;
    let mean_load = run_loads.iter().sum::<f64>() / n;
    let sd_load = (run_loads
        .iter()
        .map(|l| (l - mean_load).powi(2))
        .sum::<f64>()
        / (n - 1.0))
        .sqrt();
    println!(
        "{seeds} runs x {servers} pairs x {duration} s; requests written to {}",
        out.display()
    );
    println!(
        "mean batch size         analytic {:.4}",
        params.mean_batch_size()
    );
    println!(
        "mean file size (bytes)  analytic {:.0}   measured {:.0} over {files} files",
        params.mean_file_size(),
        bytes as f64 / files as f64
    );
    println!(
        "offered load (Mbps)     analytic {:.2}   measured {:.2} (sd {:.2} between runs, min {:.2}, max {:.2})",
        params.offered_load_bps(servers) / 1e6,
        mean_load / 1e6,
        sd_load / 1e6,
        run_loads.iter().cloned().fold(f64::INFINITY, f64::min) / 1e6,
        run_loads.iter().cloned().fold(0.0, f64::max) / 1e6,
    );

    // The long run: one seed, the same pairs over 10,000 s, no edge effect worth speaking of.
    let long_end = SimTime::from_secs(10_000);
    let long = WwwParams {
        stop_at: Some(long_end),
        ..WwwParams::default()
    };
    let rngs = RngFactory::new(seeds + 1);
    let (mut long_files, mut long_bytes) = (0u64, 0u64);
    for i in 0..servers {
        let mut client = WwwClient::for_index(&long, &rngs, i);
        let mut server = WwwServer::for_index(&long, &rngs, i);
        while let Some(t) = client.next_request_at() {
            long_bytes += server.on_request_bytes(client.pop_request(t).expect("due").bytes);
        }
        long_files += server.requests_served();
    }
    println!(
        "long run, {servers} pairs x 10000 s: {long_files} files, mean {:.0} bytes, offered load {:.2} Mbps",
        long_bytes as f64 / long_files as f64,
        long_bytes as f64 * 8.0 / long_end.as_secs_f64() / 1e6
    );
    let summary = serde_json::json!({
        "seeds": seeds,
        "servers": servers,
        "duration_s": duration,
        "analytic": {
            "mean_batch_size": params.mean_batch_size(),
            "mean_file_size_bytes": params.mean_file_size(),
            "offered_load_bps_per_server": params.offered_load_bps_per_server(),
            "offered_load_bps": params.offered_load_bps(servers),
        },
        "measured": {
            "files": files,
            "mean_file_size_bytes": bytes as f64 / files as f64,
            "run_offered_load_bps": run_loads,
            "long_run_offered_load_bps": long_bytes as f64 * 8.0 / long_end.as_secs_f64(),
            "long_run_mean_file_size_bytes": long_bytes as f64 / long_files as f64,
        },
    });
    let summary_path = out.with_file_name("summary.json");
    fs::write(&summary_path, serde_json::to_string_pretty(&summary)?)?;
    println!("summary written to {}", summary_path.display());
    Ok(())
}
