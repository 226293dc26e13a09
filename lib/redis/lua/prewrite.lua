-- lib/redis/lua/prewrite.lua - lock cell P for transaction start8 and write
-- its data (store.h's prewrite), checking all before the first write.
-- ARGV: P, start8, lock record, op of the write, ack ('1' when an
-- observer's ack rides on this cell), value (of a put), notify key (''
-- when the column is not observed or the op keeps the value), the
-- owner and TTL in ms of the lease that KEYS[5], on the primary, names.
-- KEYS: the bucket's four (common.lua), then that lease.
-- Returns {0} (locked now, or already by us: a retried prewrite), {1}
-- (rolled back by another process), {2, key} (this transaction already
-- committed here, at key), {3, lock record} (another lock is in the
-- way) or {4} (someone committed the cell after start8).  Locked by
-- us, the primary has its lease, set or refreshed.  A lock of ours or
-- a record of our commit found is written again: a commit run again
-- after a WAIT failed learns so, from the WAIT that follows, that a
-- replica has it now (a new connection's WAIT covers only its own
-- writes).
local P, start8, lockrec, wop, wack, value, nkey, owner, ttl =
    ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7],
    ARGV[8], ARGV[9]

refuse_below_safe_point(start8)

-- Acks and users' writes pass each other: an ack conflicts with later
-- acks only; an observer's own write to its cell is a write.
local function conflicts(rop)
	if rop == 'R' then
		return false
	end
	if wop == 'A' then
		return rop == 'A'
	end
	if rop == 'A' then
		return wack == '1'
	end
	return true
end

-- {0}, with the primary's lease set or refreshed: a reader takes the
-- owner for alive while it lasts (rs_owner_alive).
local function lease()
	if KEYS[5] then
		redis.call('SET', KEYS[5], owner, 'PX', ttl)
	end
	return {0}
end

-- Our own write record decides first: after a crash past the commit
-- point, newer writes and even a newer lock of others may sit on the
-- cell.  Then a lock, then newer writes, conflict.
local newer = false
local r = each_write_since(P, start8, function(key, rec)
	if string.sub(rec, 2, 9) == start8 then
		if string.sub(rec, 1, 1) == 'R' then
			return {1}
		end
		redis.call('HSET', KEYS[2], key, rec)
		return {2, key}
	end
	newer = newer or conflicts(string.sub(rec, 1, 1))
	return nil
end)
if r then
	return r
end
local lock = redis.call('HGET', KEYS[2], lock_key(P))
if lock then
	if lock_start(lock) == start8 then
		redis.call('HSET', KEYS[2], lock_key(P), lock)
		return lease()
	end
	return {3, lock}
end
if newer then
	return {4}
end
put(lock_key(P), lockrec)
redis.call('ZADD', KEYS[3], 0, lock_key(P))
if wop == 'P' then
	put(data_key(P, start8), value)
end
if nkey ~= '' then
	put(nkey, '')
end
return lease()
