// The 100-flow drop-tail dumbbell of `bench/peers` in ns-3 (issue 15): the same case as the
// script's ns-2 Tcl and sattcp's `scenarios/geo-dumbbell-droptail.toml`, as close as ns-3's
// TCP allows. Built by `bench/peers` against the headers and libraries of the PyPI wheel `ns3`
// (3.44.post0, release profile with NS_LOG and NS_ASSERT compiled in); not part of sattcp.
//
//   peers-ns3 --flows=100 --duration=100 --mss=1024 --delay=275ms --buffer=1546875 \
//             --ssthresh=3093504 --rcvbuf=4194240
//
// Prints one line of key=value figures: delivered_bytes (sum over flows of the bytes the
// receiving application got, in order), run_s (wall seconds of Simulator::Run alone), events
// (ns-3's executed-event count), timeouts (entries into CA_LOSS, one per retransmission timeout
// that starts a loss episode),
// rto_expiries (every retransmission timeout: ReTxTimeout doubles the traced RTO, `m_rto =
// Min(m_rto + m_rto, 60 s)`, and nothing else doubles it exactly; not counted: SYN timeouts,
// whose RTO SendEmptyPacket recomputes first, and expiries at the 60 s cap) and recoveries
// (entries into CA_RECOVERY, the fast retransmits).
// `--verbose=1` also prints to stderr every flow's congestion-state changes and one flow's
// (`--traceFlow`, 0 by default) cwnd, ssthresh, bytes in flight, RTO and highest cumulative ACK
// as they change (the evidence for bench/README.md's account of the GEO difference). Any ns-3 attribute can be
// changed for an experiment, e.g. `--ns3::TcpL4Protocol::SocketType=ns3::TcpLinuxReno`.
// `--rttSamples=550000000,562500001,...` instead feeds those RTT samples (ns) to ns-3's own
// RttMeanDeviation and prints the estimate, the variation and the RTO as TcpSocketBase computes
// it with the settings below, one line per sample (sattcp's tcp/rtt.rs unit test checks the
// same sequence), and exits.
//
// Topology: N senders -- r1 == bottleneck == r2 -- N receivers; access links 155.52 Mbps /
// 5 us with queues that never fill (100,000 packets), the bottleneck 45 Mbps / `delay` each
// way with a drop-tail queue of `buffer` bytes in each direction. No traffic-control queue
// disc (ns-3 installs FqCoDel by default when addresses are assigned; it is removed), so the
// point-to-point device's DropTail queue is the only queue, as in ns-2 and sattcp.
//
// TCP: NewReno congestion control with classic (RFC 6582) loss recovery, not ns-3's default
// PRR; no SACK, no timestamps, window scaling on (the receive buffer 65535 << 6 bytes gives
// shift 6 as sattcp's `window_scale = 6`), every segment acknowledged at once
// (DelAckCount 1), initial window 1 segment, limited transmit off, minimum RTO 200 ms, clock
// granularity 100 ms (sattcp's and ns-2's `timer_granularity`/`tcpTick_`), initial RTO 3 s.
// Connections open with SYN / SYN-ACK as sattcp's do (ns-2's one-way agents have none).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace ns3;

namespace
{
uint64_t g_timeouts = 0;
uint64_t g_rto_expiries = 0;
uint64_t g_recoveries = 0;
bool g_verbose = false;
uint32_t g_traceFlow = 0;

// A change of the congestion state to CA_LOSS is one retransmission timeout.
void
CongStateChanged(uint32_t flow,
                 TcpSocketState::TcpCongState_t,
                 TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        ++g_timeouts;
    }
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g_recoveries;
    }
    if (g_verbose)
    {
        std::fprintf(stderr,
                     "%.6f flow %u %s\n",
                     Simulator::Now().GetSeconds(),
                     flow,
                     TcpSocketState::TcpCongStateName[now]);
    }
}

void
RtoChanged(uint32_t flow, Time, Time now)
{
    std::fprintf(stderr, "%.6f flow %u rto %.3f\n", Simulator::Now().GetSeconds(), flow, now.GetSeconds());
}

// ReTxTimeout: `m_rto = Min(m_rto + m_rto, Time::FromDouble(60, Time::S))`.
void
RtoDoubled(Time before, Time now)
{
    if (before.IsStrictlyPositive() && now == Min(before + before, Seconds(60)) && now != before)
    {
        ++g_rto_expiries;
    }
}

void
AckChanged(uint32_t flow, SequenceNumber32, SequenceNumber32 now)
{
    std::fprintf(stderr, "%.6f flow %u una %u\n", Simulator::Now().GetSeconds(), flow, now.GetValue());
}

void
U32Changed(const char* what, uint32_t, uint32_t now)
{
    std::fprintf(stderr, "%.6f flow %u %s %u\n", Simulator::Now().GetSeconds(), g_traceFlow, what, now);
}

void
HookSocket(Ptr<BulkSendApplication> app, uint32_t flow)
{
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    NS_ABORT_MSG_UNLESS(sock, "BulkSendApplication has no TCP socket yet");
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongStateChanged, flow));
    sock->TraceConnectWithoutContext("RTO", MakeCallback(&RtoDoubled));
    if (g_verbose && flow == g_traceFlow)
    {
        sock->TraceConnectWithoutContext("RTO", MakeBoundCallback(&RtoChanged, flow));
        sock->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&AckChanged, flow));
        sock->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&U32Changed, "cwnd"));
        sock->TraceConnectWithoutContext("BytesInFlight", MakeBoundCallback(&U32Changed, "inflight"));
        sock->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&U32Changed, "ssthresh"));
    }
}
// The RTT estimator alone: each sample, then `m_rto = Max(est + Max(ClockGranularity, 4 var),
// MinRto)` as TcpSocketBase::EstimateRtt computes it.
int
RttSamples(const std::string& list)
{
    Ptr<RttEstimator> rtt = CreateObject<RttMeanDeviation>();
    TimeValue granularity;
    TimeValue minRto;
    Ptr<TcpSocketBase> socket = CreateObject<TcpSocketBase>();
    socket->GetAttribute("ClockGranularity", granularity);
    socket->GetAttribute("MinRto", minRto);
    std::size_t at = 0;
    while (at < list.size())
    {
        std::size_t end = list.find(',', at);
        end = end == std::string::npos ? list.size() : end;
        int64_t ns = std::stoll(list.substr(at, end - at));
        rtt->Measurement(NanoSeconds(ns));
        Time rto = Max(rtt->GetEstimate() + Max(granularity.Get(), rtt->GetVariation() * 4), minRto.Get());
        std::printf("sample=%lld est=%lld var=%lld rto=%lld\n",
                    static_cast<long long>(ns),
                    static_cast<long long>(rtt->GetEstimate().GetNanoSeconds()),
                    static_cast<long long>(rtt->GetVariation().GetNanoSeconds()),
                    static_cast<long long>(rto.GetNanoSeconds()));
        at = end + 1;
    }
    return 0;
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 100;
    double duration = 100.0;
    uint32_t mss = 1024;
    std::string delay = "275ms";
    std::string accessRate = "155.52Mbps";
    std::string accessDelay = "5us";
    std::string bottleneckRate = "45Mbps";
    uint32_t buffer = 1546875;
    uint32_t ssthresh = 3021 * 1024;
    uint32_t rcvbuf = 65535u << 6;
    double stagger = 0.01;
    bool staticRouting = false;
    std::string rttSamples;

    // Fixed before the command line is parsed: `--ns3::TcpSocketBase::MinRto=1s` and the like
    // override them for an experiment.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(3)));
    // A segment that times out many times in 100 s must not end the connection.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(100));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(100)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(3)));

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of sender/receiver pairs", flows);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
    cmd.AddValue("delay", "bottleneck one-way delay", delay);
    cmd.AddValue("accessRate", "access link rate", accessRate);
    cmd.AddValue("accessDelay", "access link delay", accessDelay);
    cmd.AddValue("rate", "bottleneck rate", bottleneckRate);
    cmd.AddValue("buffer", "bottleneck drop-tail queue, bytes, each direction", buffer);
    cmd.AddValue("ssthresh", "initial slow-start threshold, bytes", ssthresh);
    cmd.AddValue("rcvbuf", "receive buffer (advertised window), bytes", rcvbuf);
    cmd.AddValue("stagger", "seconds between flow starts", stagger);
    cmd.AddValue("staticRouting",
                 "routes set by hand (hosts to their router, each router to the other) instead of global routing, whose\n"
                 "tables grow with the square of the nodes (bench/peers --scale)",
                 staticRouting);
    cmd.AddValue("verbose", "print each congestion-state change to stderr", g_verbose);
    cmd.AddValue("traceFlow", "the flow whose cwnd, RTO, ... --verbose=1 prints (default 0)", g_traceFlow);
    cmd.AddValue("rttSamples", "comma-separated RTT samples (ns): print ns-3's estimator after each, and exit", rttSamples);
    cmd.Parse(argc, argv);
    if (!rttSamples.empty())
    {
        return RttSamples(rttSamples);
    }
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(ssthresh));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvbuf));
    // The sender's buffer holds every unacknowledged byte: twice the largest window.
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(2 * rcvbuf));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, buffer)));
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));

    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
    TrafficControlHelper tc;
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    Ipv4InterfaceContainer coreIf = addresses.Assign(core);
    tc.Uninstall(core);
    addresses.NewNetwork();
    std::vector<Ipv4Address> sinkAddress;
    for (uint32_t i = 0; i < flows; ++i)
    {
        NetDeviceContainer a = access.Install(senders.Get(i), routers.Get(0));
        Ipv4InterfaceContainer ia = addresses.Assign(a);
        tc.Uninstall(a);
        addresses.NewNetwork();
        NetDeviceContainer b = access.Install(receivers.Get(i), routers.Get(1));
        Ipv4InterfaceContainer ib = addresses.Assign(b);
        tc.Uninstall(b);
        addresses.NewNetwork();
        sinkAddress.push_back(ib.GetAddress(0));
        if (staticRouting)
        {
            // A host's only device is interface 1 (0 is the loopback); its router is the /30's other end.
            Ipv4StaticRoutingHelper routing;
            routing.GetStaticRouting(senders.Get(i)->GetObject<Ipv4>())->SetDefaultRoute(ia.GetAddress(1), 1);
            routing.GetStaticRouting(receivers.Get(i)->GetObject<Ipv4>())->SetDefaultRoute(ib.GetAddress(1), 1);
        }
    }
    if (staticRouting)
    {
        // Each router reaches its own hosts by their connected /30s and everything else over the
        // bottleneck, its interface 1 (installed first).
        Ipv4StaticRoutingHelper routing;
        routing.GetStaticRouting(routers.Get(0)->GetObject<Ipv4>())->SetDefaultRoute(coreIf.GetAddress(1), 1);
        routing.GetStaticRouting(routers.Get(1)->GetObject<Ipv4>())->SetDefaultRoute(coreIf.GetAddress(0), 1);
    }
    else
    {
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    }

    const uint16_t port = 5000;
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(i));
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));

        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinkAddress[i], port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(16 * mss));
        ApplicationContainer c = source.Install(senders.Get(i));
        Time start = Seconds(i * stagger);
        c.Start(start);
        // The socket exists once the application has started.
        Simulator::Schedule(start + NanoSeconds(1),
                            &HookSocket,
                            DynamicCast<BulkSendApplication>(c.Get(0)),
                            i);
    }

    Simulator::Stop(Seconds(duration));
    // The event loop alone (without building the network), as sattcp's `run_s`.
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t delivered = 0;
    for (const auto& s : sinks)
    {
        delivered += s->GetTotalRx();
    }
    std::printf("delivered_bytes=%llu run_s=%.6f events=%llu timeouts=%llu rto_expiries=%llu recoveries=%llu\n",
                static_cast<unsigned long long>(delivered),
                run_s,
                static_cast<unsigned long long>(Simulator::GetEventCount()),
                static_cast<unsigned long long>(g_timeouts),
                static_cast<unsigned long long>(g_rto_expiries),
                static_cast<unsigned long long>(g_recoveries));
    Simulator::Destroy();
    return 0;
}
