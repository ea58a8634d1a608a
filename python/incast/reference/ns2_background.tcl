# Background flows (background.tcp_flows with background.tcp_to_client): each
# a host of its own on the switch, cabled as a server is, whose one-way agent
# has unending data for the client from time 0 (an FTP source), so that it
# shares the client's port with the reads. ns2.py puts this text before the run
# only when the scenario has such flows. Its agents are not counted with the
# servers' (they never finish a block).
for {set j 0} {$j < $P(background)} {incr j} {
    set bnode($j) [$ns node]
    $ns simplex-link $bnode($j) $switch $P(rate) $P(up) DropTail
    $ns simplex-link $switch $bnode($j) $P(rate) $P(down) DropTail
    $ns queue-limit $bnode($j) $switch $P(unbounded)
    $ns queue-limit $switch $bnode($j) $P(unbounded)
    set btcp($j) [new Agent/TCP/$P(agent)]
    set bsink($j) [new Agent/$P(sink)]
    $ns attach-agent $bnode($j) $btcp($j)
    $ns attach-agent $client $bsink($j)
    $ns connect $btcp($j) $bsink($j)
    $btcp($j) set fid_ [expr {$P(servers) + $j}]
    set bftp($j) [new Application/FTP]
    $bftp($j) attach-agent $btcp($j)
    $ns at 0.0 "$bftp($j) start"
}
