// ns-3's CSMA model on the scenario of `wirespeed sim csma -n 24 -l 64`: N hosts on one
// 10 Mbit/s channel with 3.96 us of propagation (3000 ft of coax), each sending minimum frames
// flat out. ns-3's CsmaChannel lets one device transmit at a time and the others back off on
// a busy channel: it does not model collisions, jams or propagation between stations. Prints
// simulated frames per wall second, the figure bench/RESULTS.md compares.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/csma-module.h"
#include "ns3/network-module.h"

#include <chrono>
#include <cstdio>

using namespace ns3;

static uint64_t g_frames = 0;

static void
TxEnd(Ptr<const Packet>)
{
    g_frames++;
}

int
main(int argc, char** argv)
{
    uint32_t hosts = 24;
    uint32_t payload = 46; // + 14 header + 4 FCS = a 64-byte frame
    double seconds = 10.0;
    CommandLine cmd;
    cmd.AddValue("hosts", "transmitting hosts", hosts);
    cmd.AddValue("payload", "payload bytes per frame", payload);
    cmd.AddValue("seconds", "simulated seconds", seconds);
    cmd.Parse(argc, argv);

    NodeContainer nodes;
    nodes.Create(hosts);
    CsmaHelper csma;
    csma.SetChannelAttribute("DataRate", StringValue("10Mbps"));
    csma.SetChannelAttribute("Delay", TimeValue(NanoSeconds(3960)));
    NetDeviceContainer devices = csma.Install(nodes);
    PacketSocketHelper sockets;
    sockets.Install(nodes);

    ApplicationContainer apps;
    for (uint32_t i = 0; i < hosts; ++i)
    {
        PacketSocketAddress to;
        to.SetSingleDevice(devices.Get(i)->GetIfIndex());
        to.SetPhysicalAddress(devices.Get((i + 1) % hosts)->GetAddress());
        to.SetProtocol(1);
        OnOffHelper onoff("ns3::PacketSocketFactory", Address(to));
        // Twice the channel's capacity in all: saturating, without drowning the simulator in
        // application packets that the device queue only drops.
        onoff.SetConstantRate(DataRate(20000000 / hosts), payload);
        apps.Add(onoff.Install(nodes.Get(i)));
        devices.Get(i)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxEnd));
    }
    apps.Start(Seconds(0.0));
    apps.Stop(Seconds(seconds));

    auto start = std::chrono::steady_clock::now();
    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("ns-3 %s csma: %u hosts x %u-byte payload, %.0f s simulated: %llu frames in "
                "%.2f s wall = %.0f frames per wall second\n",
                "3.37",
                hosts,
                payload,
                seconds,
                static_cast<unsigned long long>(g_frames),
                wall,
                g_frames / wall);
    Simulator::Destroy();
    return 0;
}
