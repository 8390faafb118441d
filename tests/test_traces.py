"""Packet traces: the pcapng file a run writes parses with a standard reader (dpkt) and with
tshark, has the packets, sequence numbers and SACK blocks of the run's packet table, and the
table itself (RunResult.packets, Parquet) is consistent with the run's counters."""

from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import dpkt
import numpy as np
import pandas as pd
import pytest

import sattcp
from sattcp.errors import SattcpError
from sattcp.traces import COLUMNS, SYN

# One SACK flow per pair through a dumbbell whose 4-packet bottleneck queue overflows, a
# scripted loss of flow 0's segment 5 (bytes 5001..6001) and bit errors on the bottleneck.
SCENARIO = """
[run]
duration = "3s"
seed = 3
[topology]
pairs = 2
[links.access]
rate = "100Mbps"
delay = "1ms"
[links.bottleneck]
rate = "10Mbps"
delay = "20ms"
ber = 5e-7
[switch]
buffer = "4pkt"
[tcp]
flavor = "sack"
mss = 1000
window = 65535
window_scale = 4
[app]
kind = "bulk"
[[loss]]
flow = 0
segment = 5
[trace]
packets = "all"
"""

# pcapng block types and option codes (pcapng spec, draft-ietf-opsawg-pcapng).
SHB, IDB, EPB = 0x0A0D0D0A, 0x00000001, 0x00000006
OPT_COMMENT, IF_NAME, EPB_FLAGS = 1, 2, 2


def read_pcapng(path):
    """Interfaces (names) and packets (interface, time in ns, IP bytes, comment, flags) of a
    pcapng file, block by block with dpkt's block parsers (dpkt's Reader merges interfaces)."""
    names, packets = [], []
    with open(path, "rb") as f:
        data = f.read()
    off = 0
    while off < len(data):
        btype, blen = struct.unpack_from("<II", data, off)
        buf = data[off:off + blen]
        if btype == IDB:
            idb = dpkt.pcapng.InterfaceDescriptionBlockLE(buf)
            assert idb.linktype == 101  # LINKTYPE_RAW: IPv4 first
            names.append(next(o.data.decode() for o in idb.opts if o.code == IF_NAME))
        elif btype == EPB:
            epb = dpkt.pcapng.EnhancedPacketBlockLE(buf)
            opts = {o.code: o.data for o in epb.opts if o.code != 0}
            comment = opts.get(OPT_COMMENT, b"").decode() or None
            flags = struct.unpack("<I", opts[EPB_FLAGS])[0] if EPB_FLAGS in opts else None
            packets.append((epb.iface_id, (epb.ts_high << 32) | epb.ts_low, epb.pkt_data, epb.pkt_len, comment, flags))
        else:
            assert btype == SHB, hex(btype)
        off += blen
    return names, packets


def ones_complement_sum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def sack_blocks(tcp: dpkt.tcp.TCP) -> list[tuple[int, int]]:
    for kind, data in dpkt.tcp.parse_opts(tcp.opts):
        if kind == dpkt.tcp.TCP_OPT_SACK:
            edges = struct.unpack(f"!{len(data) // 4}I", data)
            return list(zip(edges[::2], edges[1::2], strict=True))
    return []


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    r = sattcp.run(SCENARIO)
    path = tmp_path_factory.mktemp("pcap") / "run.pcapng"
    written = r.write_pcap(path)
    return r, path, written


def test_packet_table_agrees_with_the_runs_counters(traced):
    r, _, _ = traced
    p = r.packets
    assert list(p.columns) == COLUMNS
    assert r.data["warnings"] == []
    assert p["t"].is_monotonic_increasing and p["t"].max() <= 3.0
    assert set(p["event"].cat.categories) == {"sent", "queued", "dropped", "dequeued", "received"}
    for _, link in r.links.iterrows():
        on = p[p["link"] == link["link"]]
        assert (on["event"] == "queued").sum() == link["packets"], link["link"]
        assert ((on["event"] == "dropped") & (on["reason"] == "queue_full")).sum() == link["drops_queue_full"]
    assert r.links.loc[0, "drops_queue_full"] > 0 and r.links.loc[0, "drops_corrupted"] > 0
    for _, f in r.flows.iterrows():
        sent = p[(p["event"] == "sent") & (p["flow"] == f["flow"]) & (p["dir"] == "data") & ((p["flags"] & SYN) == 0)]
        assert len(sent) == f["segments_sent"]
    # The scripted loss at flow 0's sender: a host event (no link), segment 5.
    lost = p[p["reason"] == "scripted"]
    assert lost[["flow", "seq", "len"]].values.tolist() == [[0, 5001, 1000]]
    assert lost["link"].isna().all()
    assert p.loc[p["reason"].isna(), "event"].ne("dropped").all()


def test_pcap_has_one_interface_per_link_and_the_tables_packets(traced):
    r, path, written = traced
    p = r.packets
    names, packets = read_pcapng(path)
    assert names == list(r.links["link"]) + ["drops"]
    wire = p[p["event"] == "dequeued"]
    drops = p[p["event"] == "dropped"]
    assert written == (len(wire), len(drops))
    assert len(packets) == len(wire) + len(drops)
    for i, name in enumerate(names[:-1]):
        got = [(t, ip) for (iface, t, ip, _, _, _) in packets if iface == i]
        want = wire[wire["link"] == name]
        assert len(got) == len(want), name
        assert [t for t, _ in got] == want["t_ns"].tolist()
        # Sequence numbers, acknowledgements, addresses and ports, packet by packet.
        decoded = []
        for _, raw in got:
            ip = dpkt.ip.IP(raw)
            tcp = ip.data
            decoded.append((ip.src[3] - 1, ip.dst[3] - 1, tcp.seq, tcp.ack if tcp.flags & dpkt.tcp.TH_ACK else 0, ip.len - 20 - tcp.off * 4))
        expected = list(zip(want["src"], want["dst"], want["seq"], want["ack"].where((want["flags"] & 2) > 0, 0), want["len"], strict=True))
        assert decoded == [tuple(int(x) for x in e) for e in expected], name
    # The drops interface: each drop at its time with "<link>: <reason>".
    got_drops = [(t, c) for (iface, t, _, _, c, _) in packets if iface == len(names) - 1]
    link_or_host = drops["link"].astype(object).where(drops["link"].notna(), "node " + drops["node"].astype(str))
    assert got_drops == list(zip(drops["t_ns"].tolist(), (link_or_host + ": " + drops["reason"].astype(str)).tolist(), strict=True))


def test_pcap_headers_carry_options_and_correct_checksums(traced):
    r, path, _ = traced
    p = r.packets
    _, packets = read_pcapng(path)
    wire = p[p["event"] == "dequeued"].reset_index(drop=True)
    link_packets = [(ip, orig) for (iface, _, ip, orig, _, _) in packets if iface < len(r.links)]
    n_sack = 0
    for (raw, orig), (_, row) in zip(link_packets, wire.iterrows(), strict=True):
        ip = dpkt.ip.IP(raw)
        tcp = ip.data
        # Headers only are captured; the original length is the whole datagram.
        assert len(raw) == 20 + tcp.off * 4 and orig == ip.len == 20 + tcp.off * 4 + row["len"]
        assert ones_complement_sum(raw[:20]) == 0xFFFF
        pseudo = ip.src + ip.dst + struct.pack("!BBH", 0, 6, ip.len - 20)
        # The payload (zeros) adds nothing to the sum: the checksum holds for the whole segment.
        assert ones_complement_sum(pseudo + raw[20:]) == 0xFFFF
        opts = dict(dpkt.tcp.parse_opts(tcp.opts)) if tcp.opts else {}
        if row["flags"] & SYN:
            assert struct.unpack("!H", opts[dpkt.tcp.TCP_OPT_MSS])[0] == 1000
            assert opts[dpkt.tcp.TCP_OPT_WSCALE] == b"\x04"
            assert dpkt.tcp.TCP_OPT_SACKOK in opts
        blocks = sack_blocks(tcp)
        want = [(row[f"sack{k}_start"], row[f"sack{k}_end"]) for k in (1, 2, 3)][: row["n_sack"]]
        assert blocks == want
        n_sack += bool(blocks)
    assert n_sack > 0
    # After the scripted loss of bytes 5001..6001, flow 0's receiver SACKs from 6001 on.
    acks = wire[(wire["flow"] == 0) & (wire["dir"] == "ack") & (wire["n_sack"] > 0) & (wire["link"] == "bottleneck-rev")]
    assert acks[["ack", "sack1_start", "sack1_end"]].head(2).values.tolist() == [[5001, 6001, 7001], [5001, 6001, 8001]]


def test_corrupted_transmissions_are_flagged(traced):
    r, path, _ = traced
    _, packets = read_pcapng(path)
    flagged = [f for (iface, _, _, _, c, f) in packets if c and c.startswith("corrupted")]
    dropped = r.packets[(r.packets["reason"] == "corrupted") & (r.packets["event"] == "dropped")]
    assert len(flagged) == len(dropped) > 0
    assert all(f == (2 | 1 << 24) for f in flagged)  # outbound, CRC error


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (apt-get install tshark)")
def test_tshark_reads_the_file_and_decodes_sack_blocks(traced):
    r, path, _ = traced
    fields = ["frame.interface_name", "tcp.seq_raw", "tcp.ack_raw", "tcp.options.sack_le", "tcp.options.sack_re"]
    out = subprocess.run(
        ["tshark", "-r", str(path), "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields", *[a for f in fields for a in ("-e", f)], "-E", "occurrence=a", "-E", "aggregator=,"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert out.returncode == 0, out.stderr
    # Nothing on stderr but tshark's note that it runs as root (CI does).
    complaints = [line for line in out.stderr.splitlines() if line.strip() and "Running as user" not in line and "could be dangerous" not in line]
    assert complaints == [], out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    p = r.packets
    wire = p[p["event"] == "dequeued"]
    assert len(rows) == len(wire) + (p["event"] == "dropped").sum()
    on_rev = [row for row in rows if row[0] == "bottleneck-rev" and row[3]]
    want = wire[(wire["link"] == "bottleneck-rev") & (wire["n_sack"] > 0)]
    assert len(on_rev) == len(want) > 0
    for row, (_, w) in zip(on_rev, want.iterrows(), strict=True):
        les = [int(x) for x in row[3].split(",")]
        res = [int(x) for x in row[4].split(",")]
        assert les == [w[f"sack{k}_start"] for k in (1, 2, 3)][: w["n_sack"]]
        assert res == [w[f"sack{k}_end"] for k in (1, 2, 3)][: w["n_sack"]]
        assert int(row[2]) == w["ack"]
    # No packet is malformed.
    bad = subprocess.run(["tshark", "-r", str(path), "-Y", "_ws.malformed || _ws.expert.severity >= error"], capture_output=True, text=True, timeout=120, check=False)
    assert bad.stdout.strip() == "", bad.stdout[:2000]


def test_parquet_export_round_trips(traced, tmp_path):
    import pyarrow.parquet as pq

    r, _, _ = traced
    path = r.save_packets(tmp_path / "packets.parquet")
    back = pq.read_table(path).to_pandas()
    pd.testing.assert_frame_equal(back, r.packets, check_categorical=False)
    assert b"sattcp.scenario" in pq.read_schema(path).metadata


def test_without_a_packet_trace():
    r = sattcp.run(SCENARIO, overrides={"trace.packets": "none", "run.duration": "0.2s"})
    assert list(r.packets.columns) == COLUMNS and len(r.packets) == 0
    with pytest.raises(SattcpError, match="no packet trace"):
        r.write_pcap("x.pcapng")


def test_the_log_is_bounded_and_says_so():
    r = sattcp.run(SCENARIO, overrides={"trace.max_packet_events": 500})
    assert len(r.packets) <= 500
    (w,) = r.data["warnings"]
    assert w.startswith("packet trace stopped at") and "trace.max_packet_events = 500" in w
    # What it holds is the unbounded table's events before the stop: a prefix of it.
    full = sattcp.run(SCENARIO)
    assert 0 < len(r.packets) < len(full.packets)
    pd.testing.assert_frame_equal(r.packets, full.packets.head(len(r.packets)))
    assert np.all(r.packets["t"] < float(w.split()[4]) + 1e-6)


def short_of_memory(monkeypatch: pytest.MonkeyPatch, available: int) -> None:
    """From now on runs give their packet log ``available`` bytes of memory in place of the
    machine's (a test-only argument of the native Simulation; not a scenario key)."""
    from sattcp import _core

    monkeypatch.setattr(_core, "Simulation", functools.partial(_core.Simulation, packet_log_memory=available))


def test_a_log_short_of_memory_stops_and_says_why(monkeypatch):
    # 2 MiB for the log: its share (a sixth) holds 4096 events and 1024 SACK blocks, not 8192
    # events (crates/sattcp-core/tests/traces.rs has the same run).
    full = sattcp.run(SCENARIO)
    short_of_memory(monkeypatch, 2 << 20)
    r = sattcp.run(SCENARIO)
    (w,) = r.data["warnings"]
    m = re.fullmatch(r"packet trace stopped at (\d+\.\d{6}) s: the log \(4096 events, 272\.0 KiB\) would outgrow the memory available "
                     r"\(1\.7 MiB of 2\.0 MiB\): grown to 528\.0 KiB, it would exceed its share, 341\.3 KiB \(1/6 of the memory available "
                     r"and of what it holds, to leave room for its table in Python\); (\d+) later events were not recorded and events from "
                     r"that instant on are left out", w)
    assert m, w
    stop, missed = float(m[1]), int(m[2])
    # A usable table: the unbounded table's events before the stop, as a prefix of it.
    assert missed > 0 and len(r.packets) == int((full.packets["t"] < stop).sum())
    pd.testing.assert_frame_equal(r.packets, full.packets.head(len(r.packets)))
    # The run itself is the same.
    assert r.data["digest"] == full.data["digest"] and r.data["flows"] == full.data["flows"]


def memory_cgroup(limit: int) -> tuple[Path, Path] | str:
    """A new memory cgroup limited to ``limit`` bytes, as (its directory, the file a process
    joins it by), or why there is none here (cgroup v1's memory hierarchy or v2 with the memory
    controller delegated to the root's children; root to create it)."""
    if os.geteuid() != 0:
        return "needs root to create a memory cgroup"
    v1, v2 = Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")
    delegated = v2 / "cgroup.subtree_control"
    if (v1 / "memory.limit_in_bytes").exists():
        d, limit_file = v1 / f"sattcp-test-{os.getpid()}", "memory.limit_in_bytes"
    elif delegated.exists() and "memory" in delegated.read_text().split():
        d, limit_file = v2 / f"sattcp-test-{os.getpid()}", "memory.max"
    else:
        return "no cgroup v1 memory hierarchy, nor a v2 one with the memory controller for the root's children"
    try:
        d.mkdir()
        (d / limit_file).write_text(str(limit))
    except OSError as e:
        return f"cannot create a memory cgroup at {d}: {e}"
    return d, d / "cgroup.procs"


def test_a_log_in_a_memory_limited_cgroup_stops_within_the_limit(tmp_path):
    # A batch job's or container's limit (600 MiB) far below the machine's memory: the log reads
    # the cgroup's limit and stops within it, and the run ends normally with what it recorded.
    # Reading only the machine's memory, this log (300 s: about 24 million events, 1.5 GB)
    # would grow until the kernel killed the process at the limit.
    from conftest import ROOT

    limit = 600 << 20
    cg = memory_cgroup(limit)
    if isinstance(cg, str):
        pytest.skip(cg)
    d, procs = cg
    pcap = tmp_path / "run.pcapng"
    try:
        run = subprocess.run(
            ["sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", sys.executable, "-m", "sattcp.cli", "run",
             "scenarios/geo-dumbbell-droptail.toml", "--set", "tcp.mss=1024", "--set", "trace.max_packet_events=1000000000",
             "--set", "run.duration=300s", "--pcap", str(pcap), "--force", "--quiet"],
            cwd=ROOT, capture_output=True, text=True, timeout=600)
    finally:
        d.rmdir()
    assert run.returncode == 0, run.stderr
    # The estimate's refusal (forced) and the log's stop both name the cgroup's limit.
    assert "more than half of the 0.6 GiB this process's cgroup allows (forced" in run.stderr, run.stderr
    m = re.search(r"^sattcp: warning: packet trace stopped at [\d.]+ s: the log \((\d+) events, ([\d.]+) MiB\) would outgrow the memory "
                  r"available \(([\d.]+) MiB of its cgroup's limit, 600\.0 MiB\)", run.stderr, re.M)
    assert m, run.stderr
    events, held = int(m[1]), float(m[2]) * 2**20
    # Stopped at a doubling whose next step would pass a sixth of the limit.
    assert held <= limit / 6 < 2 * held + 1024 * 64 * 2 and events * 64 <= held
    _, packets = read_pcapng(pcap)
    assert 0 < len(packets) <= events


def test_a_pcap_on_a_full_disk_fails_naming_the_file_and_leaves_nothing(capsys, tmp_path):
    # A 64 KiB file system (tmpfs; root to mount it): the trace does not fit. Before, the last
    # buffered bytes' error was dropped ("wrote ..." with exit 0) or came back as an internal
    # error, and a truncated file was left.
    from conftest import SCENARIOS
    from sattcp.cli import main

    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to make a small tmpfs")
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(tiny)], check=True)
    try:
        pcap = tiny / "run.pcapng"
        assert main(["run", str(SCENARIOS / "geo-bulk.toml"), "--set", "run.duration=5s", "--pcap", str(pcap), "--quiet"]) == 1
        err = capsys.readouterr().err
        assert f"sattcp: cannot write {pcap}: No space left on device" in err and "wrote" not in err, err
        assert list(tiny.iterdir()) == []
    finally:
        subprocess.run(["umount", str(tiny)], check=True)


def test_a_pcap_through_a_link_is_written_where_it_points_and_a_device_in_place(capsys, tmp_path):
    from conftest import SCENARIOS
    from sattcp.cli import main

    args = ["run", str(SCENARIOS / "geo-bulk.toml"), "--set", "run.duration=1s", "--quiet", "--pcap"]
    # A link stays a link; its target gets the file.
    link = tmp_path / "link.pcapng"
    link.symlink_to("target.pcapng")
    assert main([*args, str(link)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and len(read_pcapng(tmp_path / "target.pcapng")[1]) > 0
    # A device is written in place, never renamed over (as root that would replace it): /dev/full
    # takes nothing, so the write fails at its last bytes, naming the file.
    if not Path("/dev/full").exists():
        return
    full = tmp_path / "full.pcapng"
    full.symlink_to("/dev/full")
    assert main([*args, str(full)]) == 1
    assert f"sattcp: cannot write {full}: No space left on device" in capsys.readouterr().err
    assert Path("/dev/full").is_char_device() and full.is_symlink()


def test_the_command_line_says_when_the_log_is_short_of_memory(monkeypatch, capsys, tmp_path):
    from conftest import SCENARIOS
    from sattcp.cli import main

    # 1 MiB: 2048 events fit, 4096 do not.
    short_of_memory(monkeypatch, 1 << 20)
    pcap = tmp_path / "run.pcapng"
    assert main(["run", str(SCENARIOS / "geo-bulk.toml"), "--set", "run.duration=5s", "--pcap", str(pcap), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^sattcp: warning: packet trace stopped at \d+\.\d{6} s: the log \(2048 events, 128\.0 KiB\) would outgrow "
                     r"the memory available \(896\.0 KiB of 1\.0 MiB\): ", err, re.M), err
    # What was recorded is written.
    _, packets = read_pcapng(pcap)
    assert 0 < len(packets) < 2048 and f"wrote {pcap} ({len(packets):,} packets on the links, 0 drops)" in err


def test_selection_and_bad_values():
    r = sattcp.run(SCENARIO, overrides={"trace.packets": '{ flows = [1], links = ["bottleneck"] }', "run.duration": "0.5s"}, raw_overrides=True)
    assert set(r.packets["flow"]) == {1} and set(r.packets["link"]) == {"bottleneck"}
    with pytest.raises(sattcp.ScenarioError) as e:
        sattcp.run(SCENARIO, overrides={"trace.packets": '{ flows = [9], links = ["nope"] }'}, raw_overrides=True)
    paths = [p["path"] for p in e.value.problems]
    assert paths == ["trace.packets.flows.0", "trace.packets.links.0"]


def test_the_command_line_writes_the_pcap(tmp_path):
    # `sattcp run --pcap` records every packet when the scenario records none, and the file
    # holds each link's transmissions as the same run's packet table has them.
    from conftest import run_cli

    pcap = tmp_path / "run.pcapng"
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=5s", "--pcap", str(pcap), "--quiet")
    assert p.returncode == 0, p.stderr
    assert 'recording every packet (trace.packets = "all"' in p.stderr
    r = sattcp.run("scenarios/geo-bulk.toml", overrides={"run.duration": "5s", "trace.packets": "all"})
    wire = r.packets[r.packets["event"] == "dequeued"]
    names, packets = read_pcapng(pcap)
    assert names == list(r.links["link"]) + ["drops"]
    per_link = [sum(1 for pk in packets if pk[0] == i) for i in range(len(names) - 1)]
    assert per_link == [int((wire["link"] == n).sum()) for n in names[:-1]] and sum(per_link) > 1000
    assert f"wrote {pcap} ({sum(per_link):,} packets on the links, 0 drops)" in p.stderr
    # What trace.packets selects is kept; a name that is not .pcapng is refused before running.
    p = run_cli("run", "scenarios/geo-bulk.toml", "--set", "run.duration=5s", "--set", "trace.packets={links=[\"bottleneck\"]}",
                "--pcap", str(pcap), "--quiet")
    assert p.returncode == 0 and "recording every packet" not in p.stderr, p.stderr
    _, kept = read_pcapng(pcap)
    bottleneck = names.index("bottleneck")
    assert len(kept) == per_link[bottleneck] and {pk[0] for pk in kept} == {bottleneck}
    p = run_cli("run", "scenarios/geo-bulk.toml", "--pcap", str(tmp_path / "run.pcap"))
    assert p.returncode == 2 and p.stderr.strip() == f"sattcp: --pcap {tmp_path}/run.pcap: the file is pcapng; give it the suffix .pcapng"


def test_packet_outputs_are_checked_as_save_is(tmp_path):
    # Before: save_packets without a packet trace wrote an empty table, wrote Parquet into
    # "p.csv", and a missing folder or a folder given as the file was a WriteError with
    # pyarrow's words about a temporary file (write_pcap: a bare SattcpError and "Is a
    # directory"); a path of None, a number was pathlib's TypeError.
    from sattcp import OutputPathError

    untraced = sattcp.run(SCENARIO, overrides={"trace.packets": "none", "run.duration": "0.2s"})
    with pytest.raises(SattcpError, match="no packet trace"):
        untraced.save_packets(tmp_path / "p.parquet")
    assert not list(tmp_path.iterdir())
    r = sattcp.run(SCENARIO, overrides={"run.duration": "0.2s"})
    for write in (r.save_packets, r.write_pcap, r.save):
        for path, message in ((tmp_path, "is a folder, not a file"), (tmp_path / "no" / "p.parquet", "does not exist"),
                              (None, r"must be a path \(a str or a pathlib.Path\), got NoneType"), (3, "must be a path")):
            with pytest.raises(OutputPathError, match=message):
                write(path)
    with pytest.raises(OutputPathError, match="give it the suffix .parquet"):
        r.save_packets(tmp_path / "p.csv")
    assert not list(tmp_path.iterdir())
    assert r.write_pcap(os.fsencode(tmp_path / "b.pcapng"))[0] > 0  # bytes are a path too


def test_a_result_pickles_with_its_packet_table(tmp_path):
    # Before: pickle.dumps(result) and copy.deepcopy(result) raised "TypeError: cannot pickle
    # 'sattcp._core.Simulation' object", traced or not (a process pool, a cache, joblib).
    import copy
    import pickle

    r = sattcp.run(SCENARIO, overrides={"run.duration": "0.2s"})
    back = pickle.loads(pickle.dumps(r))
    assert back.summary == r.summary and back.config == r.config
    pd.testing.assert_frame_equal(back.flows, r.flows)
    pd.testing.assert_frame_equal(back.packets, r.packets)
    assert back.save_packets(tmp_path / "p.parquet").exists()
    with pytest.raises(SattcpError, match="this result is a copy"):
        back.write_pcap(tmp_path / "x.pcapng")
    assert r.write_pcap(tmp_path / "x.pcapng")[0] > 0  # the original still writes it
    untraced = copy.deepcopy(sattcp.run(SCENARIO, overrides={"run.duration": "0.2s", "trace.packets": "none"}))
    assert len(untraced.packets) == 0
    with pytest.raises(SattcpError, match="no packet trace"):
        untraced.write_pcap(tmp_path / "y.pcapng")


def test_recording_changes_no_figure_and_on_ip_links_not_the_digest():
    """docs/traces.md: a packet trace changes nothing of an IP run; on ATM ports it changes the
    digest and the event count (a watched port wakes at its own times), no figure."""
    from conftest import SCENARIOS

    def both(name: str) -> tuple[dict, dict]:
        runs = [sattcp.run(SCENARIOS / name, overrides={"run.duration": "3s", "trace.packets": t}).data for t in ("none", "all")]
        for d in runs:
            d["summary"].pop("wall_time_s", None)
            d["summary"].pop("events_per_s", None)
        return runs[0], runs[1]

    plain, traced = both("geo-dumbbell-droptail.toml")
    assert traced["digest"] == plain["digest"] and traced["events"] == plain["events"]
    plain, traced = both("kota-wan.toml")
    assert traced["digest"] != plain["digest"] and traced["events"] > plain["events"]
    same = ("summary", "flows", "links")
    assert {k: traced[k] for k in same} == {k: plain[k] for k in same}


def test_a_moving_links_no_route_drops_are_traced_where_they_happen():
    """A packet whose transmission ends while a moving link has no path is sent on the link
    (its figures count it) and lost as its last bit leaves (docs/leo.md). The trace logged the
    drop when the packet was queued, before the outage, with no queued or dequeued event."""
    link = {"rate": "10Mbps", "schedule": [{"at": "0s", "delay": "50ms"}, {"at": "3.5s", "delay": "200ms", "rate": "5Mbps"},
                                           {"at": "8s", "up": False}, {"at": "9s", "delay": "20ms"}]}
    scenario = {"run": {"duration": "12s"}, "topology": {"kind": "dumbbell", "pairs": 3},
                "links": {"access": {"rate": "100Mbps", "delay": "1ms"}, "bottleneck": link},
                "switch": {"buffer": "200pkt"}, "tcp": {"flavor": "sack", "mss": 1000, "window_scale": 5},
                "app": {"kind": "transfer", "bytes": "2MB"}, "trace": {"packets": "all"}}
    r = sattcp.run(scenario)
    p = r.packets
    for ln in r.data["links"]:
        if not ln["link"].startswith("bottleneck"):
            continue
        on = p[p["link"] == ln["link"]]
        assert (on["event"] == "queued").sum() == ln["packets"]
        lost = on[on["reason"] == "no_route"]
        assert len(lost) == ln["drops_by_reason"].get("no_route", 0)
        assert ((lost["t"] >= 8) & (lost["t"] < 9)).all(), lost["t"].describe()
        for uid, t in zip(lost["uid"], lost["t"], strict=True):
            mine = on[on["uid"] == uid]
            queued = mine[mine["event"] == "queued"]["t"].max()
            dequeued = mine[mine["event"] == "dequeued"]["t"].max()
            assert queued <= dequeued <= t, (uid, queued, dequeued, t)
    assert (p["reason"] == "no_route").sum() > 0
