# incast's synchronized read in ns-2.35: N servers and one client on one
# switch, one-way TCP agents, a barrier between blocks. Generated runs set the
# array P (see incast/reference/ns2.py) before this text; nothing here is
# edited per run.
#
# Output, one line each: "block K MS" (K from 1, the block time in ms), then
# "counters TIMEOUTS RETRANSMITTED DROPS DATA_PACKETS".

set ns [new Simulator]
$ns use-scheduler Heap
ns-random $P(seed)

# Packets as long as the engine's frames on the wire (framing as bytes), so
# that the rate and the delays are the engine's own.
Agent/TCP set packetSize_ $P(packet)
Agent/TCPSink set packetSize_ $P(ack)
Agent/TCPSink set maxSackBlocks_ $P(sack_blocks)
Agent/TCP set windowInit_ $P(init_cwnd)
Agent/TCP set window_ $P(window)
Agent/TCP set minrto_ $P(rto_min)
Agent/TCP set maxrto_ $P(rto_max)
Agent/TCP set rtxcur_init_ $P(rto_initial)
Agent/TCP set tcpTick_ $P(tick)
Agent/TCP set numdupacks_ $P(dupack_threshold)
Agent/TCP set singledup_ $P(limited_transmit)
Agent/TCP set slow_start_restart_ $P(restart_after_idle)
Agent/TCP set timestamps_ $P(timestamps)
# incast's connections start established, with one RTT sample, a handshake's
# on an empty network, taken and cwnd at the initial window: here the agents
# send their SYNs one at a time, P(handshake_gap) apart, so no SYN waits in a
# queue or times out, and block 1 starts once every handshake is done. The
# SYN (syn_ as ns-default.tcl has it) is timed; without delay_growth_ the
# agent's first data segment leaves beside it, while the SYN is timed, so its
# ACK takes no second sample. While the
# others finish theirs, an agent's idle timer fires every RTO
# (TcpAgent::timeout); with slow_start_restart_ each firing would set cwnd_
# to 1 and recover_ to maxseq_, barring a fast retransmit of block 1's first
# segment. So restart after idle is off until block 1's request reaches the
# agent, which then starts as an established connection: cwnd_ at
# windowInit_, ssthresh_ at window_ and the RTO not backed off (backoff_ 1),
# as TcpAgent::reset leaves them, though background traffic that started at
# time 0 made the handshake lose a packet, and counters from zero.
Agent/TCP set delay_growth_ false
Agent/TCPSink/DelAck set interval_ $P(delayed_ack)
Agent/TCPSink/Sack1/DelAck set interval_ $P(delayed_ack)

set switch [$ns node]
set client [$ns node]
$ns simplex-link $switch $client $P(rate) $P(down) DropTail
$ns simplex-link $client $switch $P(rate) $P(up) DropTail
$ns queue-limit $switch $client $P(queue)
$ns queue-limit $client $switch $P(unbounded)
set monitor [$ns monitor-queue $switch $client ""]
if {$P(trace) ne ""} {
    set trace [open $P(trace) w]
    $ns trace-queue $switch $client $trace
}

# With P(vars) set, every server agent traces the variables a timeout is
# classified by (one line per assignment, in event order; Ns2Run.timeout_classes).
# The highest cumulative ACK is highest_ack_ in C++ but bound to Tcl as ack_.
if {$P(vars) ne ""} { set vtrace [open $P(vars) w] }
set rng [new RNG]
$rng seed $P(seed)
for {set i 0} {$i < $P(servers)} {incr i} {
    set node($i) [$ns node]
    # link.skew: server i's cable is i skews longer, both ways.
    set skew [expr {$i * $P(skew)}]
    $ns simplex-link $node($i) $switch $P(rate) [expr {$P(up) + $skew}] DropTail
    $ns simplex-link $switch $node($i) $P(rate) [expr {$P(down) + $skew}] DropTail
    $ns queue-limit $node($i) $switch $P(unbounded)
    $ns queue-limit $switch $node($i) $P(unbounded)
    set tcp($i) [new Agent/TCP/$P(agent)]
    set sink($i) [new Agent/$P(sink)]
    $ns attach-agent $node($i) $tcp($i)
    $ns attach-agent $client $sink($i)
    $ns connect $tcp($i) $sink($i)
    $tcp($i) set fid_ $i
    $tcp($i) set slow_start_restart_ false
    if {$P(vars) ne ""} {
        $tcp($i) attach $vtrace
        foreach v {nrexmit_ dupacks_ ack_ maxseq_} { $tcp($i) trace $v }
    }
}

# TCPSink's bytes_ counts delivered packets at their size on the wire,
# headers included, from what it held after the handshake.
proc delivered {i segments} {
    global P base
    return [expr {$base($i) + $segments * $P(wire)}]
}

# A block ends when the client holds every segment of it. Without delayed
# ACKs each sender learns it one ACK path later (TcpAgent::finish calls
# "done" once everything sent is acknowledged), so the end is the latest of
# those instants less the ACK path (server i's is 2i skews longer); with
# delayed ACKs the sinks are polled.
set block 0
set started 0.0
set target 0
set pending 0
set ended 0.0
proc flow_done {i} {
    global ns P pending ended
    set ended [expr {max($ended, [$ns now] - $P(ack_path) - 2 * $i * $P(skew))}]
    incr pending -1
    if {$pending == 0} { next_block $ended }
}
proc poll {} {
    global ns P sink target
    for {set i 0} {$i < $P(servers)} {incr i} {
        if {[$sink($i) set bytes_] < [delivered $i $target]} {
            $ns at [expr {[$ns now] + $P(poll)}] poll
            return
        }
    }
    next_block [$ns now]
}
for {set i 0} {$i < $P(servers)} {incr i} {
    $tcp($i) proc done {} [list flow_done $i]
}

proc next_block {now} {
    global ns P tcp sink block started target rng monitor pending ended base handshake aligned
    if {$block == 0 && !$aligned} {
        # Block 1 starts on a boundary of tcpTick_, as the engine's starts at
        # time 0, so that its RTT samples count the same tick boundaries.
        set aligned 1
        set start [expr {ceil([$ns now] / $P(tick)) * $P(tick)}]
        if {$start < [$ns now]} { set start [expr {$start + $P(tick)}] }
        $ns at $start "next_block $start"
        return
    }
    if {$block == 0} {
        for {set i 0} {$i < $P(servers)} {incr i} {
            set base($i) [$sink($i) set bytes_]
            foreach v {nrexmit_ nrexmitpack_ ndatapack_} { set handshake($i,$v) [$tcp($i) set $v] }
            if {$P(poll) > 0} { $tcp($i) proc done {} {} }
        }
        set handshake(drops) [$monitor set pdrops_]
    } else {
        puts "block $block [expr {($now - $started) * 1000.0}]"
    }
    if {$block == $P(blocks)} {
        set timeouts 0; set retransmitted 0; set data 0
        for {set i 0} {$i < $P(servers)} {incr i} {
            incr timeouts [expr {[$tcp($i) set nrexmit_] - $handshake($i,nrexmit_)}]
            incr retransmitted [expr {[$tcp($i) set nrexmitpack_] - $handshake($i,nrexmitpack_)}]
            incr data [expr {[$tcp($i) set ndatapack_] - $handshake($i,ndatapack_)}]
        }
        puts "counters $timeouts $retransmitted [expr {[$monitor set pdrops_] - $handshake(drops)}] $data"
        exit 0
    }
    incr block
    set started $now
    set target [expr {$target + $P(segments)}]
    set pending $P(servers)
    set ended 0.0
    # The requests leave the client back to back, in server order or in a
    # fresh random order (Fisher-Yates with ns-2's generator), and each server
    # answers after its turnaround, drawn from [0, jitter].
    set order {}
    for {set i 0} {$i < $P(servers)} {incr i} { lappend order $i }
    for {set i [expr {$P(servers) - 1}]} {$P(shuffle) && $i > 0} {incr i -1} {
        set j [$rng integer [expr {$i + 1}]]
        set t [lindex $order $i]
        lset order $i [lindex $order $j]
        lset order $j $t
    }
    for {set k 0} {$k < $P(servers)} {incr k} {
        set i [lindex $order $k]
        set at [expr {$now + ($k + 1) * $P(request_tx) + $P(request_path) + $i * $P(skew) + [$rng uniform 0 $P(jitter)]}]
        # GIP (section V-C): every stripe unit starts from gip_head_cwnd segments.
        set head ""
        if {$block == 1} {
            # TcpAgent::output counts the SYN apart from the data (curseq_ += 1),
            # so "advanceby 1" also sent one data segment, whose ACK grew cwnd.
            set head "$tcp($i) set slow_start_restart_ $P(restart_after_idle); $tcp($i) set cwnd_ $P(init_cwnd); $tcp($i) set ssthresh_ $P(window); $tcp($i) set backoff_ 1; "
        }
        if {$P(gip_head_cwnd) > 0} { append head "$tcp($i) set cwnd_ $P(gip_head_cwnd); " }
        $ns at $at "$head$tcp($i) advanceby $P(segments)"
    }
    if {$P(poll) > 0} { $ns at [expr {[$ns now] + $P(poll)}] poll }
}
# The handshake: each agent's SYN, answered by its sink.
set pending $P(servers)
set aligned 0
for {set i 0} {$i < $P(servers)} {incr i} { $ns at [expr {$i * $P(handshake_gap)}] "$tcp($i) advanceby 1" }
$ns run
