#!lua name=perc_oracle_3
-- lib/redis/lua/oracle.lua - the timestamp oracle of the Redis store, a
-- function library (FUNCTION LOAD), not a script: it keeps state in
-- the server's memory between calls, which scripts cannot.
--
-- The paper's oracle hands out timestamps from memory and persists only
-- a ceiling, ahead of them.  So does this one.  KEYS[1] holds the
-- ceiling C: no timestamp above C was ever handed out.  In memory, per
-- key: ceiling (C as this server last knew it), next (the next to hand
-- out) and limit (the highest that may be handed out: a ceiling the
-- client saw reach the AOF and a replica).  Handing out writes nothing,
-- so it costs no fsync and no WAIT.  Moving the ceiling is a write the
-- client waits on (WAIT 1), then confirms; only then does the limit
-- move.  So what was handed out stays below a ceiling that a restart
-- (the AOF) and a failover (the replica) keep.
--
-- Memory that does not match C is stale or new: this server restarted,
-- was promoted, or another server moved C meanwhile.  It starts again
-- from C, above everything handed out anywhere.  A gap is harmless.
--
-- Timestamps are hybrid (lib/timestamp.h): this server's clock
-- (TIME) in the high bits, so that their age can be told, and never
-- below the next counter value, so that they keep increasing when the
-- clock steps back or a failover brings another server's clock.  The
-- ceiling runs a few seconds of clock ahead.  Timestamps stay below
-- 2^53: Lua's numbers are doubles.
--
-- The oracle also knows, per data directory, the oldest transaction it
-- may have open, so that gc in any directory of the table spares what
-- they read (lib/gc.c).  A directory's start is noted in the same
-- atomic step that hands it out (perc3_begin), and the directory tells
-- when its transactions end (perc3_open).  This too lives in memory
-- only, written to neither AOF nor replica: it costs a begin nothing,
-- and a restart or a failover forgets it until each directory's next
-- begin or publication.

local state = {}
local open = {}         -- per key: directory -> oldest start it may have open
local handed = {}       -- per key: directory -> last start handed to it

local function persisted(key)
	return tonumber(redis.call('GET', key) or '0')
end

-- The state of key, started again from C when it does not match.
local function current(key)
	local c = persisted(key)
	local st = state[key]
	if st == nil or st.ceiling ~= c then
		st = { ceiling = c, next = c + 1, limit = c, wanted = c }
		state[key] = st
	end
	return st
end

-- The clock as a timestamp: milliseconds since epoch_ms, shifted.
local function clock(epoch_ms, shift)
	local t = redis.call('TIME')
	local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
	return math.max(ms - epoch_ms, 0) * shift
end

-- perc3_ts KEY N EPOCH_MS LOGICAL_BITS AHEAD_MS: {first, 0} when N
-- timestamps first.. were handed out; {first, C'} asks the caller to
-- persist and confirm C' as well, while there is still room; {0, C'}:
-- none now, persist and confirm C' first.
local function ts(keys, args)
	local n = tonumber(args[1])
	local shift = 2 ^ tonumber(args[3])
	local ahead = tonumber(args[4]) * shift
	local st = current(keys[1])
	local first = math.max(st.next, clock(tonumber(args[2]), shift))
	if first + n - 1 > st.limit then
		st.wanted = first + n - 1 + ahead
		return { 0, st.wanted }
	end
	st.next = first + n
	if st.limit - st.next < ahead / 2 and st.wanted <= st.limit then
		st.wanted = st.next + ahead
		return { first, st.wanted }
	end
	return { first, 0 }
end

-- perc3_ts_persist KEY C': the ceiling becomes at least C'.  It is
-- written even when it does not move, so that the caller's WAIT after
-- it covers whatever write moved it.
local function persist(keys, args)
	local st = current(keys[1])
	local c = math.max(st.ceiling, tonumber(args[1]))
	redis.call('SET', keys[1], string.format('%.0f', c))
	st.ceiling = c
	return c
end

-- perc3_ts_confirm KEY C': a replica has the ceiling C' (the caller's
-- WAIT said so): the limit may rise to it.  0 when this server's
-- memory was started again meanwhile: take timestamps again.
local function confirm(keys, args)
	local c = tonumber(args[1])
	local st = current(keys[1])
	if c > st.ceiling then
		return 0
	end
	st.limit = math.max(st.limit, c)
	return 1
end

-- perc3_ts_last KEY: the last timestamp handed out, or C, above it,
-- when this server has handed out none since it started.
local function last(keys)
	local st = current(keys[1])
	return st.next - 1
end

-- The table of key's directories, made on first use.
local function table_of(t, key)
	if t[key] == nil then
		t[key] = {}
	end
	return t[key]
end

-- perc3_begin KEY N EPOCH_MS LOGICAL_BITS AHEAD_MS DIR: perc3_ts's
-- answer; a start handed out is DIR's, which has it open from now on.
local function begin(keys, args)
	local r = ts(keys, args)
	local dir = args[5]
	local opened = table_of(open, keys[1])
	if r[1] > 0 then
		if opened[dir] == nil then
			opened[dir] = r[1]
		end
		table_of(handed, keys[1])[dir] = r[1] + tonumber(args[1]) - 1
	end
	return r
end

-- perc3_open KEY DIR AT OLDEST: DIR's transactions that started below
-- AT are all among its journals, the oldest of which started at OLDEST
-- (0: none); those that start later are above AT (lib/gc.c).  So DIR
-- has nothing open below the older of the two; and nothing at all when
-- it has no journal and no start was handed to it after AT.  The reply:
-- the oldest start any directory may have open, 0 when none may.
local function publish(keys, args)
	local dir, at, oldest = args[1], tonumber(args[2]), tonumber(args[3])
	local opened = table_of(open, keys[1])
	local min = 0
	if at <= 0 then
		return redis.error_reply('ERR perc3_open: no timestamp')
	elseif oldest > 0 then
		opened[dir] = math.min(oldest, at)
	elseif (table_of(handed, keys[1])[dir] or 0) <= at then
		opened[dir] = nil
	else
		opened[dir] = at
	end
	for _, start in pairs(opened) do
		if min == 0 or start < min then
			min = start
		end
	end
	return min
end

redis.register_function('perc3_ts', ts)
redis.register_function('perc3_ts_persist', persist)
redis.register_function('perc3_ts_confirm', confirm)
redis.register_function{ function_name = 'perc3_ts_last',
    callback = last, flags = { 'no-writes' } }
redis.register_function('perc3_begin', begin)
redis.register_function{ function_name = 'perc3_open',
    callback = publish, flags = { 'no-writes' } }
