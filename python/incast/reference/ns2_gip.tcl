# GIP's redundant copies at each stripe unit's tail (GIP section IV-B and V-B;
# incast's tcp::gip), for scenarios with tcp.gip_copies above 0. ns2.py puts
# this text before the run only then, so every other script is as before.
#
# The agents' C++ has no GIP: each server agent's ack_ and dupacks_ are traced
# into a channel whose writes call gip_write, so every acceptable ACK (a new
# one, or a duplicate) is seen as it arrives; the copy is sent by an event at
# the same instant, once the agent has finished with that ACK. Once every
# packet of the unit is sent and the ACK does not cover its last packet:
#   333: t_seqno_ is set to the last packet and cwnd_ opened for one send, then
#        both are put back: one copy per ACK whatever cwnd says, at most
#        P(gip_copies) per unit;
#   123: once per unit, cwnd_ is cut by three packets and t_seqno_ set back to
#        the third-last packet not yet acknowledged: the agent sends the three
#        again as its window allows, as it sends new data.
# With P(vars) set, the traced lines go on to that file too (the timeout classes
# read them).
proc gip_chan {cmd id args} {
    switch -- $cmd {
        initialize { return {initialize finalize watch write} }
        write {
            set data [lindex $args 0]
            gip_write $data
            return [string length $data]
        }
        default { return }
    }
}
set gip_channel [chan create write gip_chan]
fconfigure $gip_channel -buffering none
for {set i 0} {$i < $P(servers)} {incr i} {
    set gip_server([$node($i) id]) $i
    set gip_sent($i) 0
    set gip_unit($i) -1
    $tcp($i) attach $gip_channel
    foreach v {ack_ dupacks_} { $tcp($i) trace $v }
    if {$P(vars) ne ""} {
        foreach v {nrexmit_ maxseq_} { $tcp($i) trace $v }
    }
}
# A traced line is "time saddr sport daddr dport name value".
proc gip_write {data} {
    global ns P vtrace gip_server
    if {$P(vars) ne ""} { puts -nonewline $vtrace $data }
    foreach line [split [string trimright $data "\n"] "\n"] {
        lassign $line t saddr sport daddr dport name value
        if {($name eq "ack_" || ($name eq "dupacks_" && $value > 0)) && [info exists gip_server($saddr)]} {
            $ns at [$ns now] "gip_ack $gip_server($saddr)"
        }
    }
}
# Block k's last packet is number 1 + k * P(segments): the handshake's
# "advanceby 1" sent packets 0 and 1 (see next_block), and every block adds
# P(segments). The handshake itself (block 0) is no stripe unit.
proc gip_ack {i} {
    global P tcp block gip_sent gip_unit
    set last [expr {1 + $block * $P(segments)}]
    set ack [$tcp($i) set ack_]
    if {$block == 0 || [$tcp($i) set maxseq_] < $last || $ack >= $last} { return }
    if {$gip_unit($i) != $last} {
        set gip_unit($i) $last
        set gip_sent($i) 0
    }
    if {$gip_sent($i) >= $P(gip_copies)} { return }
    if {$P(gip_pattern) eq "333"} {
        incr gip_sent($i)
        set next [$tcp($i) set t_seqno_]
        set cwnd [$tcp($i) set cwnd_]
        $tcp($i) set t_seqno_ $last
        $tcp($i) set cwnd_ $P(window)
        $tcp($i) advanceby 0
        $tcp($i) set cwnd_ $cwnd
        $tcp($i) set t_seqno_ $next
    } else {
        set gip_sent($i) $P(gip_copies)
        $tcp($i) set cwnd_ [expr {max(1.0, [$tcp($i) set cwnd_] - 3)}]
        $tcp($i) set t_seqno_ [expr {max($last - 2, $ack + 1)}]
        $tcp($i) advanceby 0
    }
}
