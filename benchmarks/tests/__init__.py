"""The benchmarks' own tests: each harness's quick path runs, ours and the peer agree, and a wrong peer is caught."""
