-- lib/redis/common.lua - prepended to every script of lib/redis/.
--
-- A script works on one row's bucket: KEYS[1] the sorted set of its
-- codec keys (all of score 0, so ZRANGEBYLEX walks them in byte order,
-- the order of codec.h), KEYS[2] the hash of key -> value, KEYS[3] the
-- sorted set of the bucket's lock keys.  P is the cell prefix of the
-- row and column (codec_cell_prefix), NP the same in the notify region.
-- KEYS[4], given to prewrite, commit and rollback on a transaction's
-- primary cell only, is its owner's lease (see rs_owner_alive), which
-- lives exactly while the primary is locked.
--
-- Timestamps travel as the codec's 8-byte big-endian strings and are
-- compared byte by byte: a Lua number is a double, exact only to 2^53,
-- and string comparison with < follows the server's locale.

local FF8 = string.rep('\255', 8)
local Z8 = string.rep('\0', 8)

-- ~x of an 8-byte big-endian timestamp, as in the tail of a codec key.
local function inv8(s)
	local t = {}
	for i = 1, 8 do
		t[i] = 255 - string.byte(s, i)
	end
	return string.char(unpack(t))
end

-- a <= b, both 8-byte big-endian.
local function le8(a, b)
	for i = 1, 8 do
		local x, y = string.byte(a, i), string.byte(b, i)
		if x ~= y then
			return x < y
		end
	end
	return true
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

-- Call f(key, record) for the write records of cell P at commit
-- timestamps from ~lo8 down to ~hi8 (lo8 and hi8 are the inverted
-- tails of the keys, so newest first), until f returns non-nil.
local function each_write(P, lo8, hi8, f)
	local start = '[' .. P .. '\2' .. lo8
	local stop = '[' .. P .. '\2' .. hi8
	while true do
		local keys = redis.call('ZRANGEBYLEX', KEYS[1], start, stop,
		    'LIMIT', 0, 64)
		for i = 1, #keys do
			local rec = redis.call('HGET', KEYS[2], keys[i])
			if not rec or string.len(rec) ~= 9 then
				error({err = 'PERCDAMAGED a write record is ' ..
				    'missing or malformed'})
			end
			local r = f(keys[i], rec)
			if r ~= nil then
				return r
			end
		end
		if #keys < 64 then
			return nil
		end
		start = '(' .. keys[#keys]
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

local function put(key, value)
	redis.call('HSET', KEYS[2], key, value)
	redis.call('ZADD', KEYS[1], 0, key)
end

local function del(key)
	redis.call('HDEL', KEYS[2], key)
	redis.call('ZREM', KEYS[1], key)
end
