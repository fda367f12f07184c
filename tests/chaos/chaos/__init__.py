"""The chaos suite (issue 16, docs/testing.md "The chaos suite"): real
`samsa server` processes in a network namespace of their own, faults by PID
and by nftables rule, a recorded history judged by the simulator's checker
(`samsa-sim --check-history`)."""
