# Data mining flow sizes: the cluster Greenberg et al. measured for VL2
# ("VL2: A Scalable and Flexible Data Center Network", SIGCOMM 2009, §3.1,
# Figure 2), as the CDF later papers sample it (pFabric, SIGCOMM 2013, §5.1;
# CONGA, SIGCOMM 2014). Half the flows are below 1.1 KB; 2 % are over 100 MB.
# Each line: a flow size in bytes, then the fraction of flows no larger.
# Between two points sizes are drawn uniformly (linear interpolation).
0 0
180 0.1
216 0.2
560 0.3
900 0.4
1100 0.5
1870 0.6
3160 0.7
10000 0.8
400000 0.9
3160000 0.95
100000000 0.98
1000000000 1
