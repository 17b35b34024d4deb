#!/bin/bash
# jobq init on two Galera nodes at once (GET_LOCK does not replicate):
# both succeed and leave one schema; and `jobq check` on a Galera node
# says what it sees: the cluster, the node's state, the topology.
. "$top_srcdir/tests/galera_lib.sh"
galera_setup galera_init 24760

gconf "$T/n1.ini" "$H1,$H2,$H3" <<EOC
[queue default]
EOC
gconf "$T/n2.ini" "$H2,$H3,$H1" <<EOC
[queue default]
EOC
for round in 1 2 3; do
	"$JOBQ" -c "$T/n1.ini" init >"$T/i1" 2>&1 &
	p1=$!
	"$JOBQ" -c "$T/n2.ini" init >"$T/i2" 2>&1 &
	p2=$!
	wait $p1
	r1=$?
	wait $p2
	r2=$?
	is "$r1:$r2" "0:0" "[round $round] two concurrent inits on nodes 1 and 2 exit 0"
	like "$(cat "$T/i1" "$T/i2")" "^database '$DB': schema (created|is up to date) \(version [0-9]+\)
database '$DB': schema (created|is up to date) \(version [0-9]+\)$" "[round $round] ... and say so, nothing else"
	latest=$(gsql 3 "SELECT MAX(version) FROM jobq_schema")
	is "$(gsql 3 "SELECT COUNT(*) = MAX(version) FROM jobq_schema")" 1 \
		"[round $round] one schema: version rows 1..$latest, each once (seen from node 3)"
	"$CLUSTER_SCRIPT" client "$CLUSTER" 1 -e "DROP DATABASE \`$DB\`"
	sleep 1
done

"$JOBQ" -c "$T/n1.ini" init >/dev/null
"$JOBQ" -c "$T/n2.ini" check >"$T/out" 2>"$T/err"
is "$?" 0 "jobq check on a Galera node exits 0"
like "$(cat "$T/out")" "galera: node node2, cluster of 3 nodes \(Primary\), state Synced, wsrep_sync_wait 0" \
	"it reports the node, the cluster size, its state and wsrep_sync_wait"
like "$(cat "$T/out")" "topology: Galera cluster, 3 hosts listed: workers write through the first ready one" \
	"it says the topology"
like "$(cat "$T/out")" "database: $H2," "it is on the first host of its list"
is "$(cat "$T/err")" "" "no warning for a well set up cluster"

gconf "$T/one.ini" "$H3" <<EOC
[queue default]
EOC
"$JOBQ" -c "$T/one.ini" check >"$T/out" 2>&1
like "$(cat "$T/out")" "one host listed: no failover" "one host listed: check says there is no failover"

# A node that left: its host is skipped, the next one answers.
"$CLUSTER_SCRIPT" stop-node "$CLUSTER" 2
"$JOBQ" -c "$T/n2.ini" check >"$T/out" 2>"$T/err"
is "$?" 0 "with node 2 down, check through the list 2,3,1 still exits 0"
like "$(cat "$T/out")" "database: $H3," "... on node 3, the next host"
"$JOBQ" -c "$T/one.ini" check >/dev/null 2>&1
is "$?" 0 "and check through node 3 alone still works"
gconf "$T/down.ini" "$H2" <<EOC
[queue default]
EOC
"$JOBQ" -c "$T/down.ini" check >"$T/out" 2>"$T/err"
is "$?" 69 "a list of a stopped node only: exit 69"
finish
