-- lib/redis/lua/commit.lua - commit transaction start8 on cell P at
-- commit8 (store.h's commit): if our lock is there, replace it by a
-- write record, and a put's or delete's entry in the change log
-- (log_put).  If it is gone, the write records answer: committed
-- before is success, anything else means we were rolled back.
-- ARGV: P, start8, commit8, NP ('' unless an observer's ack commits
-- here: then the notifications of the cell that its snapshot start8
-- saw are cleared, with its failure record, as STORE_CLEAR_NOTIFY says).
-- KEYS: the bucket's four (common.lua), and KEYS[5], on the primary,
-- the lease, dropped with the lock.
-- Returns {0} (committed, now or before), {1} (rolled back) or {2} (on
-- the primary, readers' mark is at or above commit8: nothing changed).
local P, start8, commit8, NP = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local lock = redis.call('HGET', KEYS[2], lock_key(P))
if not lock or lock_start(lock) ~= start8 then
	local f = find_commit(P, start8)
	if f and f[2] ~= 'R' then
		return {0}
	end
	return {1}
end
if KEYS[5] then
	local _, mark = lock_mark(lock)
	if mark and le8(commit8, mark) then
		return {2}
	end
end

-- Did the write behind a notification at ts8 land in snapshot start8
-- (write_seen)?  Only notifications below start8 are looked at;
-- newer ones are a later run's business.  One with no record at or
-- below the bucket's safe point is settled: gc removed its record.
local function seen(ts8)
	if lock_start(lock) == ts8 then
		return false    -- still locked: its fate is open
	end
	local f = find_commit(P, ts8)
	if not f then
		local sp = redis.call('HGET', KEYS[2], 'g')
		return sp ~= false and le8(ts8, sp)
	end
	return f[2] == 'R' or le8(inv8(string.sub(f[1], -8)), start8)
end

local clear = {}
if NP ~= '' then
	local keys = redis.call('ZRANGEBYLEX', KEYS[1],
	    '(' .. NP .. '\5' .. inv8(start8), '(' .. NP .. '\6')
	for i = 1, #keys do
		if seen(inv8(string.sub(keys[i], -8))) then
			clear[#clear + 1] = keys[i]
		end
	end
	clear[#clear + 1] = NP .. '\6' .. FF8   -- the failure record
end

del(lock_key(P))
redis.call('ZREM', KEYS[3], lock_key(P))
if KEYS[5] then
	redis.call('DEL', KEYS[5])
end
put(P .. '\2' .. inv8(commit8), lock_op(lock) .. start8)
log_put(P, lock_op(lock), start8, commit8)
for i = 1, #clear do
	del(clear[i])
end
return {0}
