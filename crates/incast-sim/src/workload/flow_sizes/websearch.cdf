# Web search flow sizes: the background traffic of the production cluster the
# DCTCP paper measured (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM
# 2010, §2.2, Figure 4), as the CDF later papers sample it (pFabric, SIGCOMM
# 2013; HPCC, SIGCOMM 2019, whose traffic generator ships the same points).
# Each line: a flow size in bytes, then the fraction of flows no larger.
# Between two points sizes are drawn uniformly (linear interpolation).
0 0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1
