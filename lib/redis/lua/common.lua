-- lib/redis/lua/common.lua - prepended to every script of lib/redis/.
--
-- A script works on one row's bucket, whose keys it is given, and on
-- no other key (Redis Cluster wants every key a script touches in
-- KEYS; make check's tests/script-keys holds the scripts to it):
--   KEYS[1]  the sorted set of its codec keys (all of score 0, so
--            ZRANGEBYLEX walks them in byte order, the order of codec.h)
--   KEYS[2]  the hash of key -> value
--   KEYS[3]  the sorted set of the bucket's lock keys
--   KEYS[4]  the bucket's change log (log_put)
--   KEYS[5]  given to prewrite, commit, rollback and keep on a
--            transaction's primary cell only: its owner's lease (see
--            rs_owner_alive), which lives exactly while the primary is
--            locked
-- (range.lua, scan.lua and raise.lua say how theirs differ.)  P is the
-- cell prefix of the row and column (codec_cell_prefix), NP the same in
-- the notify region.
--
-- Timestamps travel as the codec's 8-byte big-endian strings and are
-- compared byte by byte: a Lua number is a double, exact only to 2^53,
-- and string comparison with < follows the server's locale.

local FF8 = string.rep('\255', 8)
local Z8 = string.rep('\0', 8)

-- ~x of an 8-byte big-endian timestamp, as in the tail of a codec key.
local function inv8(s)
	local a, b, c, d, e, f, g, h = string.byte(s, 1, 8)
	return string.char(255 - a, 255 - b, 255 - c, 255 - d, 255 - e,
	    255 - f, 255 - g, 255 - h)
end

-- a <= b, both 8-byte big-endian: as two 32-bit halves each, which a
-- double holds exactly.  (Ten times a loop of string.byte's speed.)
local function le8(a, b)
	if #a ~= 8 or #b ~= 8 then
		error({err = 'PERCDAMAGED a timestamp is not 8 bytes'})
	end
	local ah, al = struct.unpack('>I4I4', a)
	local bh, bl = struct.unpack('>I4I4', b)
	return ah < bh or (ah == bh and al <= bl)
end

local function lock_key(P)
	return P .. '\1' .. FF8         -- LOCK_TS 0, inverted
end

local function data_key(P, start8)
	return P .. '\3' .. inv8(start8)
end

-- The start_ts and op of a lock record (codec_lock_encode).
local function lock_start(rec)
	return string.sub(rec, 3, 10)
end

local function lock_op(rec)
	return string.sub(rec, 2, 2)
end

-- A lock record split at the end of its host and primary cell: the
-- record without readers' mark, and the mark (8 bytes; a large
-- transaction's lock has one) or nil.
local function lock_mark(rec)
	local at = 27                   -- past the fixed part (LOCK_FIXED)
	for _ = 1, 3 do
		local a, b, c, d = string.byte(rec, at, at + 3)
		at = at + 4 + ((a * 256 + b) * 256 + c) * 256 + d
	end
	if at > #rec then
		return rec, nil
	end
	return string.sub(rec, 1, at - 1), string.sub(rec, at, at + 7)
end

-- The write record at key, which must be there.
local function write_record(key)
	local rec = redis.call('HGET', KEYS[2], key)
	if not rec or string.len(rec) ~= 9 then
		error({err = 'PERCDAMAGED a write record is missing or ' ..
		    'malformed'})
	end
	return rec
end

-- Call f(key, record) for the write records of cell P at commit
-- timestamps from ~lo8 down to ~hi8 (lo8 and hi8 are the inverted
-- tails of the keys, so newest first), until f returns non-nil.
-- Pages grow from 4 keys to 64: most walks stop at the first record,
-- and a page is read whole, whatever history lies below it.
local function each_write(P, lo8, hi8, f)
	local start = '[' .. P .. '\2' .. lo8
	local stop = '[' .. P .. '\2' .. hi8
	local page = 4
	while true do
		local keys = redis.call('ZRANGEBYLEX', KEYS[1], start, stop,
		    'LIMIT', 0, page)
		for i = 1, #keys do
			local r = f(keys[i], write_record(keys[i]))
			if r ~= nil then
				return r
			end
		end
		if #keys < page then
			return nil
		end
		start = '(' .. keys[#keys]
		page = math.min(page * 4, 64)
	end
end

-- The write records at or above start8, which alone can be its own or
-- newer than it, newest first.
local function each_write_since(P, start8, f)
	return each_write(P, Z8, inv8(start8), f)
end

-- The write record of transaction start8 in cell P: {key, op}, or nil.
-- Only records at or above start8 can be its own.
local function find_commit(P, start8)
	return each_write_since(P, start8, function(key, rec)
		if string.sub(rec, 2, 9) == start8 then
			return {key, string.sub(rec, 1, 1)}
		end
		return nil
	end)
end

-- gc's safe point of the bucket (raise.lua): a snapshot or a start
-- below it may miss versions gc removed, and is refused.
local function refuse_below_safe_point(ts8)
	local sp = redis.call('HGET', KEYS[2], 'g')
	if sp and not le8(sp, ts8) then
		local n = 0
		for i = 1, 8 do
			n = n * 256 + string.byte(sp, i)
		end
		error({err = 'PERCTOOOLD ' .. string.format('%.0f', n)})
	end
end

-- Run write, which writes the bucket's fence (RS_FENCE, redis.h) with
-- pcall, so that a WAIT after the script covers every write the master
-- had applied when it ran, which is what the script read.  To the
-- replicas only, not to the append-only file: with appendfsync always
-- that would sync the disk once for every read.  (pcall: a master that
-- refuses writes, its disk full, still answers, unconfirmed.)  Not at
-- all when a replica online has already acknowledged all the master
-- has applied: then the WAIT, with no write of this client's to wait
-- for, answers at once, and the replica, which would sync the fence to
-- its own file, is spared that.
local function fence(write)
	local info = redis.call('INFO', 'replication')
	local applied = tonumber(string.match(info, 'master_repl_offset:(%d+)'))
	for acked in string.gmatch(info,
	    'slave%d+:[^\r\n]-state=online,offset=(%d+)') do
		if applied ~= nil and tonumber(acked) >= applied then
			return
		end
	end
	redis.set_repl(redis.REPL_REPLICA)
	write()
	redis.set_repl(redis.REPL_ALL)
end

-- A key of the notify region ('n', REGION_NOTIFY) changes: raise the
-- bucket's mark e in the same step, which perc wait reads before and
-- after its walk of the notify cells (rs_notify_epoch, lib/wait.c).
local function notify_mark(key)
	if string.byte(key, 1) == 110 then
		redis.call('HINCRBY', KEYS[2], 'e', 1)
	end
end

local function put(key, value)
	redis.call('HSET', KEYS[2], key, value)
	redis.call('ZADD', KEYS[1], 0, key)
	notify_mark(key)
end

local function del(key)
	redis.call('HDEL', KEYS[2], key)
	redis.call('ZREM', KEYS[1], key)
	notify_mark(key)
end

-- The bucket's change log (perc log; lib/redis/log.c), KEYS[4]: a
-- sorted set beside KEYS[1], on the same slot, of one member per put or
-- delete committed in the bucket: 'L', commit8 and P (codec_log_key),
-- then the op and start8; all of score 0, in order of commit8, row,
-- column.
local function log_put(P, op, start8, commit8)
	if op == 'P' or op == 'D' then
		redis.call('ZADD', KEYS[4], 0,
		    'L' .. commit8 .. P .. op .. start8)
	end
end

-- The value of cell P visible at snapshot ts8 (store.h's read): the newest
-- put or delete committed at or before it, with the lock check of
-- read.lua (which says what kstart and kvisible are, and the reply).
-- seen, when not nil, is what a walk already read of the cell's keys:
-- seen.lock (is there a lock key) and seen.writes (its write keys,
-- newest first), so that only the records it needs are read.
local function read_cell(P, ts8, kstart, kvisible, seen)
	local function value_of(start8)
		local v = redis.call('HGET', KEYS[2], data_key(P, start8))
		if not v then
			return {3, start8}
		end
		return {0, v}
	end

	local lock = nil
	if seen == nil or seen.lock then
		lock = redis.call('HGET', KEYS[2], lock_key(P))
	end
	if lock then
		local op, st = lock_op(lock), lock_start(lock)
		if le8(st, ts8) and op ~= 'L' and op ~= 'A' then
			if kstart ~= st then
				return {2, lock}
			end
			-- No commit can come between a lock and its own.
			if kvisible == '1' then
				if op == 'P' then
					return value_of(st)
				end
				return {1}
			end
		end
	end
	local function decide(key, rec)
		local op = string.sub(rec, 1, 1)
		if op == 'P' then
			return value_of(string.sub(rec, 2, 9))
		end
		if op == 'D' then
			return {1}
		end
		return nil
	end
	if seen == nil then
		return each_write(P, inv8(ts8), FF8, decide) or {1}
	end
	local lo8 = inv8(ts8)
	for _, key in ipairs(seen.writes) do
		if le8(lo8, string.sub(key, -8)) then
			local r = decide(key, write_record(key))
			if r ~= nil then
				return r
			end
		end
	end
	return {1}
end
