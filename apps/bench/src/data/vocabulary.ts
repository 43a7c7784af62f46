/**
 * Word lists for generated messages. English words are ordered by intended frequency (the
 * generator draws them with Zipf weights); the search scenario's query terms are placed at
 * known ranks so they have known, realistic selectivity.
 */

/** English words, most frequent first. `docker` sits near rank 40: a common term. */
export const ENGLISH_WORDS: readonly string[] = `the to of and a in is it you that for this on with be
are as not can we have file if from or but run use at by will error so an your do need there
test code build docker check should here function which it's then all when output config
command server now let me see what just new value data update fix also up line return one
change path out version install type issue more error: like make module first get other
log set them only script request response local next does working user time into try
directory about source because package memory still branch merge commit some string
api would think create add list start running deployment image container port network
database query table index row column process thread call method class object field
result expected actual failed success warning message instance service cluster node pod
kubernetes nginx redis postgres sqlite python typescript javascript node.js rust go
review change diff patch sure problem look looks okay right looks good great thanks
session search history context token model prompt agent tool tools reasoning step plan
deploy deployed deploying deployer timeout retry backoff lock busy write read append
schema migration upgrade downgrade cache latency throughput benchmark profile trace
environment variable secret key certificate domain dns proxy gateway route handler
callback promise async await event loop stream buffer chunk parse serialize encode
decode json yaml toml markdown html css template render component state props hook
terminal shell bash zsh path permission owner group mode chmod chown symlink mount
volume disk space quota limit usage report metric alert dashboard grafana prometheus
upstream downstream fork clone pull push rebase cherry stash tag release changelog
refactor rename extract inline cleanup lint format typecheck compile bundle minify
linux macos windows ubuntu debian alpine kernel driver firmware bios battery screen`
  .split(/\s+/)
  .filter((w) => w.length > 0);

/** Phrases mixed into English text; `connection refused` is the phrase query's target. */
export const ENGLISH_PHRASES: readonly string[] = [
  "connection refused",
  "build failed",
  "out of memory",
  "permission denied",
  "no such file or directory",
  "segmentation fault",
  "all tests passed",
  "the quick fix",
  "works on my machine",
  "rate limit exceeded",
];

/** Hyphenated and dotted tokens (the sanitizer quotes them); `chat-send` is a query target. */
export const HYPHENATED: readonly string[] = [
  "chat-send",
  "pre-commit",
  "end-to-end",
  "read-only",
  "follow-up",
  "re-run",
  "my-app.config.ts",
  "P2.2",
  "state-db",
  "non-blocking",
];

/** A term placed in about one message in ten thousand: the rare-term query. */
export const RARE_TERM = "zephyrine";

/** Probability that a generated English message contains {@link RARE_TERM}. */
export const RARE_TERM_RATE = 0.0001;

/**
 * CJK words (Chinese mostly, some Japanese and Korean). `数据库` (3 characters), `桂林`
 * (2) and `龙` (1) are the CJK query targets.
 */
export const CJK_WORDS: readonly string[] =
  `我们 你好 可以 需要 已经 还是 因为 所以 如果 但是 这个 那个 一个 没有 问题
数据库 服务器 配置 错误 文件 测试 用户 会话 搜索 索引 性能 内存 进程 线程 网络 请求 响应 模型
代理 工具 调用 完成 解决 方案 代码 提交 分支 合并 日志 监控 缓存 队列 任务 计划 今天 明天 谢谢
部署 通信 记忆断裂 广西 桂林 龙虾 恐龙 龙 更新 版本 安装 运行 启动 停止 重启 检查 修复 确认
结果 输出 输入 参数 函数 变量 字符串 列表 对象 类型 接口 事件 消息 历史 上下文 记忆 推理
ありがとう データベース サーバー 設定 エラー ファイル テスト 안녕하세요 데이터베이스 서버 설정 오류`
    .split(/\s+/)
    .filter((w) => w.length > 0);

/** Latin tokens that appear inside CJK text, sometimes glued to it (`Agent通信`). */
export const CJK_LATIN: readonly string[] = ["Agent", "docker", "API", "SQLite", "100%", "OK", "bug", "PR"];

/** Tool names used in generated tool calls and tool results. */
export const TOOL_NAMES: readonly string[] = [
  "terminal",
  "read_file",
  "write_file",
  "search_files",
  "web_search",
  "browser_navigate",
  "memory",
  "delegate_task",
  "execute_code",
  "session_search",
];

/** Message sources of sessions, with the share of each. */
export const SOURCES: ReadonlyArray<readonly [string, number]> = [
  ["cli", 0.5],
  ["telegram", 0.2],
  ["discord", 0.1],
  ["slack", 0.08],
  ["api_server", 0.07],
  ["cron", 0.05],
];

/** Model names of generated sessions. */
export const MODELS: readonly string[] = [
  "anthropic/claude-sonnet-4",
  "openai/gpt-5",
  "nousresearch/hermes-4-405b",
  "google/gemini-2.5-pro",
  "qwen/qwen3-coder",
];
