-- lib/redis/lua/drop.lua - remove keys ARGV of one bucket, gc's old
-- versions, each from the bucket's index and its hash in one atomic
-- step.  In two commands (ZREM, then HDEL), a rollback record that a
-- second rollback of its transaction put back between them was left in
-- the index without its value, which every later look at the cell took
-- for damage.  KEYS: the bucket's four (common.lua).  Returns {0}.
for i = 1, #ARGV do
	del(ARGV[i])
end
return {0}
