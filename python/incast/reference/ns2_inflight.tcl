# A client that asks at most P(max_inflight) servers at once (workload.max_inflight,
# incast's workload::sync_read): the first K requests of a block leave as
# ns2.tcl sends them, and each response that completes lets the next one of the
# block's order go. ns2.py puts this text before the run only for scenarios with
# a limit, so every other script is as before.
#
# next_block is ns2.tcl's, run with ns2.tcl's request events held here: while it
# runs, $ns is hold, which keeps every "advanceby" event with its offset from
# the block's start and passes everything else to the simulator. A held request
# released when server i's response completes leaves the client at that moment
# (flow_done's instant of the last segment's arrival, as ns2.tcl computes it):
# as the k-th request of the block it was due (k + 1) request serializations
# after the block's start; released alone it is due one serialization after
# the completion, plus its path, skew and turnaround as drawn.
rename next_block next_block_all
rename flow_done flow_done_all
set simulator $ns
set held {}
set block_start 0.0
proc hold {verb args} {
    global simulator held block_start
    if {$verb eq "at" && [string match "*advanceby*" [lindex $args 1]]} {
        lappend held [list [expr {[lindex $args 0] - $block_start}] [lindex $args 1] [llength $held]]
        return
    }
    return [$simulator $verb {*}$args]
}
proc next_block {now} {
    global ns simulator held block_start P
    set held {}
    set block_start $now
    set ns hold
    next_block_all $now
    set ns $simulator
    foreach request [lrange $held 0 [expr {$P(max_inflight) - 1}]] {
        lassign $request offset script
        $ns at [expr {$now + $offset}] $script
    }
    set held [lrange $held $P(max_inflight) end]
}
proc flow_done {i} {
    global ns P held
    if {[llength $held] > 0} {
        set completed [expr {[$ns now] - $P(ack_path) - 2 * $i * $P(skew)}]
        lassign [lindex $held 0] offset script k
        set held [lrange $held 1 end]
        $ns at [expr {max([$ns now], $completed + $offset - $k * $P(request_tx))}] $script
    }
    flow_done_all $i
}
