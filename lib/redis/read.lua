-- lib/redis/read.lua - the value of cell P visible at snapshot ts8
-- (mvcc_read): the newest put or delete committed at or before it.
-- ARGV: P, ts8, known_start8 ('' when no fate is known), known_visible
-- ('1' when the known transaction committed at or before ts8).
-- Returns {0, value}, {1} (no value), {2, lock record} (a lock that may
-- commit below ts8 is in the way), or {3, start8} (the data of a
-- committed put is missing).
local P, ts8, kstart, kvisible = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

refuse_below_safe_point(ts8)

local function value_of(start8)
	local v = redis.call('HGET', KEYS[2], data_key(P, start8))
	if not v then
		return {3, start8}
	end
	return {0, v}
end

local lock = redis.call('HGET', KEYS[2], lock_key(P))
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
-- The write records at or below ts8, newest first.
local r = each_write(P, inv8(ts8), FF8, function(key, rec)
	local op = string.sub(rec, 1, 1)
	if op == 'P' then
		return value_of(string.sub(rec, 2, 9))
	end
	if op == 'D' then
		return {1}
	end
	return nil
end)
return r or {1}
