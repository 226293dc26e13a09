#!/usr/bin/env bats
# tests/init.bats - perc init: creating a data directory

load helpers

setup() {
	export PERC_LOCK_TIMEOUT=2
	unset PERC_DIR PERC_FAILPOINT PERC_LOCK_TTL
	D="$BATS_TEST_TMPDIR/db"
}

@test "init creates a data directory that the other commands accept" {
	run -0 --separate-stderr perc init "$D"
	assert_output ''
	[ -z "$stderr" ]
	[ -d "$D" ]
	run -0 perc -d "$D" set r c v
	run -0 perc -d "$D" get r c
	assert_output v
}

@test "init creates missing parent directories" {
	run -0 perc init "$BATS_TEST_TMPDIR/x/y/z"
	run -0 perc -d "$BATS_TEST_TMPDIR/x/y/z" ts
}

@test "init makes an existing empty directory a data directory" {
	mkdir "$D"
	run -0 perc init "$D"
	run -0 perc -d "$D" set r c v
}

@test "a new data directory holds no cells" {
	perc init "$D"
	run -0 --separate-stderr perc -d "$D" scan
	assert_output ''
	run -1 perc -d "$D" get r c
}

@test "init without DIR uses -d, else PERC_DIR, else the current directory" {
	run -0 perc -d "$BATS_TEST_TMPDIR/by-d" init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-d" ts
	PERC_DIR="$BATS_TEST_TMPDIR/by-env" run -0 perc init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-env" ts
	mkdir "$BATS_TEST_TMPDIR/by-cwd"
	cd "$BATS_TEST_TMPDIR/by-cwd"
	run -0 perc init
	run -0 perc -d "$BATS_TEST_TMPDIR/by-cwd" ts
}

@test "init DIR wins over -d and PERC_DIR" {
	PERC_DIR="$BATS_TEST_TMPDIR/env" run -0 perc -d "$BATS_TEST_TMPDIR/opt" \
	    init "$BATS_TEST_TMPDIR/arg"
	[ -d "$BATS_TEST_TMPDIR/arg" ]
	[ ! -e "$BATS_TEST_TMPDIR/env" ]
	[ ! -e "$BATS_TEST_TMPDIR/opt" ]
}

@test "init twice is fine and keeps the data" {
	perc init "$D"
	export PERC_DIR="$D"
	printf 'a\0b\n' | perc set r c
	perc set r2 c2 kept
	t=$(perc begin)
	perc set -t "$t" open col txn
	before=$(perc ts)
	run -0 --separate-stderr perc init "$D"
	assert_output ''
	[ -z "$stderr" ]
	perc get r c > "$BATS_TEST_TMPDIR/out"
	assert_bytes 'a\0b\n' "$BATS_TEST_TMPDIR/out"
	run -0 perc get r2 c2
	assert_output kept
	# The oracle goes on from where it was, and open transactions live on.
	after=$(perc ts)
	[ "$after" -gt "$before" ]
	run -0 perc commit -t "$t"
	run -0 perc get open col
	assert_output txn
}

@test "init --observe on an existing data directory keeps the data" {
	perc init "$D"
	export PERC_DIR="$D"
	perc set r email ann@example.org
	perc set r other x
	run -0 --separate-stderr perc init --observe email "$D"
	assert_output ''
	[ -z "$stderr" ]
	run -0 perc scan
	assert_output "$(printf 'r\temail\tann@example.org\nr\tother\tx')"
	perc set r email bob@example.org
	run -0 perc get r email
	assert_output bob@example.org
}

@test "init --observe records the column in the config, without removing any" {
	run -0 perc init --observe email "$D"
	grep -q email "$D/config"
	run -0 perc init --observe avatar --observe bio "$D"
	grep -q email "$D/config"
	grep -q avatar "$D/config"
	grep -q bio "$D/config"
	# Naming a column again adds it once.
	run -0 perc init --observe email "$D"
	[ "$(grep -c email "$D/config")" -eq 1 ]
}

@test "init --observe takes a column of any bytes" {
	run -0 perc init --observe "$(printf 'odd\tcol\nformat 99')" "$D"
	run -0 perc -d "$D" set r c v
	run -0 perc -d "$D" get r c
	assert_output v
	run -0 perc init "$D"
}

@test "init refuses a non-empty directory that is not a data directory: exit 6" {
	mkdir "$D"
	echo precious > "$D/notes.txt"
	run -6 --separate-stderr perc init "$D"
	assert_error_line
	assert_output ''
	[ "$(ls -A "$D")" = notes.txt ]
	[ "$(cat "$D/notes.txt")" = precious ]
	run -6 --separate-stderr perc init --observe col "$D"
	assert_error_line
	[ "$(ls -A "$D")" = notes.txt ]
}

@test "a data directory of format 1 is read, and marked format 5 by its next command" {
	# Format 2 added cell heads to the LevelDB store, which a perc of
	# format 1 would take for damaged locks; format 4, its lock index; 5,
	# change log entries written apart from their commit.
	perc_leveldb_only
	perc init "$D"
	perc -d "$D" set r c v
	sed -i 's/^format .*/format 1/' "$D/config"
	run -0 perc -d "$D" get r c
	assert_output v
	grep -qx 'format 5' "$D/config"
	sed -i 's/^format .*/format 1/' "$D/config"
	run -0 perc -d "$D" set r c w
	grep -qx 'format 5' "$D/config"
	run -0 perc -d "$D" get r c
	assert_output w
}

@test "a directory of format 3 with a lock an older perc left: its lock index is built, the lock found, and the config marked format 5" {
	# Made by a perc of format 3 (init --observe-weak w; set a b c; a
	# transaction of x y and x2 y stopped by after-prewrite-primary), so
	# its lock on x has no entry in the lock index (store.h's
	# FORMAT_LOCK_INDEX) that walks of the locks read from format 4 on.
	perc_leveldb_only
	base64 -d > "$BATS_TEST_TMPDIR/fx.tgz" <<'END'
H4sIAAAAAAAAA+2av2/TQBTHz2mLmsKAhKgKZThRCVShpL6z75zwQypERfwobRRamB3Hgapu
XDlpk0ZiYGZiYkJC/AF0QKgMSEz8BSBGusCE2GEK5yZxS4KwWsXXor6P5Ni5s/3OeX7n73tO
sTaBokYVGIxtrQWd661twjSVqkxnOkUqUYlBEGaRj0ywUq6YHsbIc93Kv/YL6/9PKdYmyhXX
s5OOay1GZMN3MNf1XfifEs4QViMazx+A/y23VFx4EKGNUP8z3uF/onEK/pfBGF62PQsXzIqJ
CwuebYnJYG2o6HpLZgVrQ26+bHurdqJqm4u4OrTfowV6jYh/1zMtJ8oHQFj8k+75nxoGxL8M
slO5zI3ZOcqtlK0x00poKtcSekqliXSe5RPpNLUMmjK5VcwjtPns4ucs8teXnr5Qvvy4IsVF
QHSI+K/UStHmALvX/2JGoKD/ZdDyP9VZSlc5FYlXWmc86VZLttcrG6H6j7AO/2uMqTD/yyAl
AhMTVddSqgry7vDx9/jvrY1Q/afRTv2nE9B/UvD1362ZadLWdp8evX4nmo+OOnTUV3pKzf9Y
q4vPEbEcO//q/mO/PVajQccpsQwqwxeczI4Tn5R9JcBeCPK/CG2EPv+p3lX/YVD/k4If/7O5
DGnndBvfv57b7zEB8mjX/6PMAPeQ/2mUQf4ng8D/zUJ80nF7/yYgbP7XjM78jzJOYP6XAY7X
vz1BitL62i8W5bhlIiWPlL5GAz/8ML7ZUKygLdZse9+IZ5uSEYv9p5ubk6i1086+VpPSaIFj
w0Fv+7DtNVKsNxuTHwtIGWiNKNYcUU1ozR1nIbG4315XsttFSeXlyPNxcfeuiPvm7GX/0NUl
FCjY4Bytq1pvKHV5P/OBJYj/zHwuNzUzF4WNcP3XVf+H93+SuHN15ub1qbtziS1H6FACOmQE
8T89m7kdkY3Q+O/WfwbnEP8yCPzfMRH00kao/3ln/U8jBuT/Urj36+3PM0JYnXbsVdsp5JPX
1ip2daFsZ9ylZdMzxb2xsX5ibFAov4E46jvSv98DBnpK8P8/y7HNUjQ2QuNf07r0H4X4l8J2
2o+JzjFPFQokXyhiBm8DAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAODA8xuMLrQ9AFAAAA==
END
	tar xzf "$BATS_TEST_TMPDIR/fx.tgz" -C "$BATS_TEST_TMPDIR"
	D=$BATS_TEST_TMPDIR/fx
	grep -qx 'format 3' "$D/config"
	run -0 perc -d "$D" get a b
	assert_output c
	grep -qx 'format 5' "$D/config"
	grep -qx 'observe-weak w' "$D/config"
	run -0 perc -d "$D" status
	assert_line "locks	1"
	run -0 perc -d "$D" resolve-locks --all
	assert_output --regexp '^x	y	[0-9]+	rolled-back$'
	run -0 perc -d "$D" status
	assert_line "locks	0"
	run -0 perc -d "$D" log --since 0
	assert_output --regexp '^[0-9]+	a	b	put	c
[0-9]+			resolved	$'
}

@test "init refuses a data directory of an unknown format: exit 6" {
	perc init "$D"
	perc -d "$D" set r c v
	sed -i 's/^format .*/format 999/' "$D/config"
	run -6 --separate-stderr perc init "$D"
	assert_error_line
	run -6 --separate-stderr perc -d "$D" get r c
	assert_error_line
	grep -q 'format 999' "$D/config"
}

@test "init usage errors: exit 2, one line" {
	run -2 --separate-stderr perc init "$D" "$D.2"
	assert_usage_error
	run -2 --separate-stderr perc init --observe
	assert_usage_error
	run -2 --separate-stderr perc init --bogus "$D"
	assert_usage_error
	[ ! -e "$D" ]
	[ ! -e "$D.2" ]
}

@test "init waits for a busy store at most PERC_LOCK_TIMEOUT, then exit 4" {
	perc_leveldb_only
	perc init "$D"
	hold_flock "$D/store.lock"
	PERC_LOCK_TIMEOUT=0.5 run -4 --separate-stderr perc init --observe col "$D"
	assert_error_line
	run ! grep -q col "$D/config"
	release_flock
	run -0 perc init --observe col "$D"
	grep -q col "$D/config"
}
