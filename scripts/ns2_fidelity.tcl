# One TCP flow over test-suite-tcpVariants.tcl's Topology/net4 (s1 -8 Mb/s, 0 ms- r1 -800 kb/s,
# 100 ms- k1) with that suite's defaults, for situations the suites do not cover (written by
# scripts/ns2_refs.py, `FIDELITY`; read back as tests/data/ns2/fid-<name>.txt).
# usage: ns ns2_fidelity.tcl <agent> <sink> <window> <data drops> <ack drops> <end> <extra Tcl>
#   <data drops>: ErrorModel/List at the head of r1 -> k1 (n-th packet of the flow, SYN = 0);
#   <ack drops>: the same at the head of k1 -> r1 (n-th ACK, SYN-ACK = 0).
lassign $argv agent sink window ddrops adrops endt extra
remove-all-packet-headers
add-packet-header Flags IP TCP
Agent/TCP set precisionReduce_ false
Agent/TCP set rtxcur_init_ 6.0
Agent/TCP set updated_rttvar_ false
Agent/TCP set minrto_ 1
Agent/TCP/Newreno set newreno_changes1_ 0
Agent/TCP/Newreno set partial_window_deflation_ 0
Agent/TCP set singledup_ 0
eval $extra
set ns [new Simulator]
set tf [open all.tr w]
$ns trace-all $tf
set s1 [$ns node]
set r1 [$ns node]
set k1 [$ns node]
$ns duplex-link $s1 $r1 8Mb 0ms DropTail
$ns duplex-link $r1 $k1 800Kb 100ms DropTail
$ns queue-limit $r1 $k1 8
$ns queue-limit $k1 $r1 8
set tcp [$ns create-connection $agent $s1 $sink $k1 1]
$tcp set window_ $window
foreach {from to drops} [list $r1 $k1 $ddrops $k1 $r1 $adrops] {
    if {[llength $drops] == 0} continue
    set em [new ErrorModule Fid]
    [$ns link $from $to] errormodule $em
    set el [new ErrorModel/List]
    $el droplist $drops
    $em insert $el
    $em bind $el 1
}
set ftp [$tcp attach-app FTP]
$ns at 1.0 "$ftp start"
$ns at $endt "flush $tf; close $tf; exit 0"
$ns run
