# The constant-bit-rate UDP source (background.udp_rate; GIP section VI-C,
# incast's sim::udp): a host of its own on the switch, cabled as a server is,
# whose UDP agent sends a datagram as long on the wire as the engine's
# (P(udp_wire) bytes, framing included, as every packet here) at P(udp_rate)
# bits per second of link time from time 0, evenly spaced (random_ 0), to a
# Null agent at the client, so that it shares the client's port with the
# reads. ns2.py puts this text before the run only when the scenario has the
# source. Its datagrams are not TCP, so the timeout classes skip them.
set unode [$ns node]
$ns simplex-link $unode $switch $P(rate) $P(up) DropTail
$ns simplex-link $switch $unode $P(rate) $P(down) DropTail
$ns queue-limit $unode $switch $P(unbounded)
$ns queue-limit $switch $unode $P(unbounded)
set udp [new Agent/UDP]
$udp set packetSize_ $P(udp_wire)
$udp set fid_ $P(udp_flow)
set unull [new Agent/Null]
$ns attach-agent $unode $udp
$ns attach-agent $client $unull
$ns connect $udp $unull
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ $P(udp_wire)
$cbr set rate_ $P(udp_rate)
$cbr set random_ 0
$cbr attach-agent $udp
$ns at 0.0 "$cbr start"
