//! The conflict radar: for the live worktree tasks of each repository and base branch, which
//! pairs would conflict if both were merged, and which task would conflict with its base as
//! it is now (git's side: `git::radar`). It looks again only when something may have
//! changed: a task's agent stopped working (its turn ended, it waits, it exited), a worktree
//! task was created, finished, merged or discarded, or someone asks (`GET …/conflicts`,
//! which also sees a base branch that moved). Nothing runs while nothing happens.
//!
//! A task's work is read as one commit (`git::snapshot::Work`) only when its files may have
//! changed; merges are computed once per pair of commits. Reports live in memory and each
//! change goes out as a `task:conflicts` event.

use super::{Engine, EngineError, EngineResult, Event, SessionEventKind, TaskEventKind, now_ms};
use crate::git::{self, GitError, snapshot::Work};
use orchestra_proto::task::Task;
use orchestra_proto::wire::{BaseConflict, ConflictReport, SessionStatus, TaskConflict};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// How long the events of one change are gathered before looking (a task's finish comes
/// as several events: its session's status, its exit, its status).
const GATHER: Duration = Duration::from_millis(150);

/// The commit message of a task's uncommitted work read as a commit (no ref points to it).
const WORK_MESSAGE: &str = "orchestra: the task's work, as the conflict radar read it";

/// A task's work as last read.
#[derive(Debug, Clone)]
struct TaskWork {
    work: Work,
    commit: String,
}

/// The radar's memory: what it read, what it worked out, what it reported.
#[derive(Default)]
pub(crate) struct RadarState {
    /// Tasks whose files may have changed since they were read.
    stale: HashSet<String>,
    works: HashMap<String, TaskWork>,
    /// The conflicting files of each pair of commits merged (smaller commit first).
    pairs: HashMap<(String, String), Vec<String>>,
    /// The conflicting files of (base commit, task commit).
    bases: HashMap<(String, String), Vec<String>>,
    reports: HashMap<String, Arc<ConflictReport>>,
    /// Conflicts that tasks merged since had with a live task, to explain its refusal.
    merged_rivals: HashMap<String, Vec<TaskConflict>>,
}

/// The radar's handle in the engine.
#[derive(Default)]
pub(crate) struct Radar {
    state: parking_lot::Mutex<RadarState>,
    /// One look at a time.
    looking: tokio::sync::Mutex<()>,
}

/// One live worktree task, as a look needs it.
#[derive(Debug, Clone)]
struct Live {
    id: String,
    name: String,
    at: git::Worktree,
    /// Its files may have changed: read them again.
    read: bool,
}

/// What one look worked out for one repository and base branch.
struct GroupResult {
    base_branch: String,
    base_commit: Option<String>,
    /// Task ids in creation order.
    ids: Vec<String>,
    names: HashMap<String, String>,
    with_base: HashMap<String, Vec<String>>,
    pairs: Vec<(String, String, Vec<String>)>,
    /// Tasks whose work could not be read, with why.
    unreadable: HashMap<String, String>,
}

/// The order of merging that conflicts least: tasks that conflict with nothing first, then
/// by fewest conflicts with other tasks, a conflict with the base last; ties keep `ids`'
/// (creation) order.
pub(crate) fn merge_order(
    ids: &[String],
    pairs: &[(String, String, Vec<String>)],
    with_base: &HashMap<String, Vec<String>>,
) -> Vec<String> {
    let rivals = |id: &String| pairs.iter().filter(|(a, b, _)| a == id || b == id).count();
    let mut order: Vec<(usize, &String)> = ids.iter().enumerate().collect();
    order.sort_by_key(|(at, id)| (with_base.contains_key(*id), rivals(id), *at));
    order.into_iter().map(|(_, id)| id.clone()).collect()
}

impl GroupResult {
    fn reports(&self, checked_at: i64) -> Vec<ConflictReport> {
        let order = merge_order(&self.ids, &self.pairs, &self.with_base);
        self.ids
            .iter()
            .map(|id| ConflictReport {
                task_id: id.clone(),
                with_base: self.with_base.get(id).map(|files| BaseConflict {
                    base_branch: self.base_branch.clone(),
                    base_commit: self.base_commit.clone().unwrap_or_default(),
                    files: files.clone(),
                }),
                with_tasks: self
                    .ids
                    .iter()
                    .filter_map(|other| {
                        let files = self.pairs.iter().find_map(|(a, b, files)| {
                            ((a == id && b == other) || (b == id && a == other)).then_some(files)
                        })?;
                        Some(TaskConflict {
                            task_id: other.clone(),
                            name: self.names.get(other).cloned().unwrap_or_default(),
                            files: files.clone(),
                        })
                    })
                    .collect(),
                checked_at: Some(checked_at),
                merge_order: order.clone(),
                note: self.unreadable.get(id).cloned(),
            })
            .collect()
    }
}

/// Reads each task's work (again only where asked) and merges: the blocking git part of a
/// look. `caches` are the previous look's; what this look used is left in them.
fn look_at_group(
    repo: &Path,
    base_branch: &str,
    tasks: &[Live],
    caches: &RadarState,
    used: &mut RadarState,
) -> GroupResult {
    let mut result = GroupResult {
        base_branch: base_branch.to_string(),
        base_commit: None,
        ids: Vec::new(),
        names: HashMap::new(),
        with_base: HashMap::new(),
        pairs: Vec::new(),
        unreadable: HashMap::new(),
    };
    let base_commit = git::Repo::discover(repo)
        .and_then(|r| r.commit_of(&format!("refs/heads/{base_branch}")))
        .ok()
        .flatten();
    result.base_commit = base_commit.clone();
    let reads = in_parallel(tasks, |t| {
        (t.id.clone(), read_work(t, caches.works.get(&t.id)))
    });
    for t in tasks {
        result.ids.push(t.id.clone());
        result.names.insert(t.id.clone(), t.name.clone());
    }
    let mut commits: Vec<(String, String)> = Vec::new();
    for (id, read) in reads {
        match read {
            Ok(w) => {
                commits.push((id.clone(), w.commit.clone()));
                used.works.insert(id, w);
            }
            Err(e) => {
                let why = format!("the radar could not read the task's work: {e}");
                result.unreadable.insert(id, why);
            }
        }
    }
    // Keep creation order whatever order the reads finished in.
    commits.sort_by_key(|(id, _)| result.ids.iter().position(|i| i == id));
    // Each merge: (task, other task or `None` for the base, the commits merged).
    let mut merges: Vec<(String, Option<String>, (String, String))> = Vec::new();
    if let Some(base) = &base_commit {
        for (id, commit) in &commits {
            merges.push((id.clone(), None, (base.clone(), commit.clone())));
        }
    }
    for (i, (a, ca)) in commits.iter().enumerate() {
        for (b, cb) in &commits[i + 1..] {
            let key = if ca <= cb {
                (ca.clone(), cb.clone())
            } else {
                (cb.clone(), ca.clone())
            };
            merges.push((a.clone(), Some(b.clone()), key));
        }
    }
    let merged = in_parallel(&merges, |(a, b, key)| {
        let cache = if b.is_some() {
            &caches.pairs
        } else {
            &caches.bases
        };
        (
            a.clone(),
            b.clone(),
            key.clone(),
            cached_merge(repo, key, cache),
        )
    });
    for (a, b, key, files) in merged {
        let files = match files {
            Ok(files) => files,
            Err(e) => {
                tracing::warn!(task = %a, other = ?b, error = %e, "the radar could not merge");
                continue;
            }
        };
        match b {
            None => {
                if !files.is_empty() {
                    result.with_base.insert(a, files.clone());
                }
                used.bases.insert(key, files);
            }
            Some(b) => {
                if !files.is_empty() {
                    result.pairs.push((a, b, files.clone()));
                }
                used.pairs.insert(key, files);
            }
        }
    }
    // Pairs in creation order, whatever order the merges finished in.
    let at = |id: &String| result.ids.iter().position(|i| i == id);
    result.pairs.sort_by_key(|(a, b, _)| (at(a), at(b)));
    result
}

/// `f` of each item, on up to as many threads as there are cores (at most 4): git's reads
/// and merges are processes of their own, and mostly wait on the disk.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if items.len() < 2 || threads < 2 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let running: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        // A part whose thread panicked is left out: what it would have found is not
        // reported this time (each result names what it is about).
        running
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// The task's work as a commit: the one read before when its files were not to be read
/// again, or its tree did not change.
fn read_work(t: &Live, before: Option<&TaskWork>) -> Result<TaskWork, GitError> {
    if let Some(before) = before.filter(|_| !t.read) {
        return Ok(before.clone());
    }
    let dir = t.at.path();
    if !dir.is_dir() {
        return Err(GitError::Gone(t.at.path.clone()));
    }
    let work = Work::of(dir)?;
    if let Some(before) = before.filter(|b| b.work == work) {
        return Ok(before.clone());
    }
    let commit = work.commit(dir, WORK_MESSAGE)?;
    Ok(TaskWork { work, commit })
}

fn cached_merge(
    repo: &Path,
    key: &(String, String),
    cache: &HashMap<(String, String), Vec<String>>,
) -> Result<Vec<String>, GitError> {
    if let Some(files) = cache.get(key) {
        return Ok(files.clone());
    }
    git::radar::conflicting_files(repo, &key.0, &key.1)
}

/// Whether an event may mean a worktree task's files or the set of live worktrees changed;
/// the task it names is to be read again.
fn task_to_read_again(engine: &Engine, ev: &Event) -> Option<String> {
    let has_worktree = |t: &Task| t.metadata.worktree.is_some();
    match ev {
        Event::Task { kind, task, .. } => {
            let matters = !matches!(
                kind,
                TaskEventKind::Output
                    | TaskEventKind::Progress
                    | TaskEventKind::Step
                    | TaskEventKind::Prompt
            );
            (matters && has_worktree(task)).then(|| task.id.clone())
        }
        Event::Session {
            kind: SessionEventKind::Status | SessionEventKind::Exited,
            session,
        } => {
            // The agent stopped writing for now: its turn ended, it waits, or it exited.
            if matches!(
                session.status,
                SessionStatus::Busy | SessionStatus::Starting
            ) {
                return None;
            }
            let id = session.task_id.as_deref()?;
            let task = engine.get_task(id).ok()?;
            has_worktree(&task).then(|| id.to_string())
        }
        _ => None,
    }
}

impl Engine {
    fn radar(&self) -> &Radar {
        &self.inner.radar
    }

    /// Follows the engine's events and looks again when one may have changed a conflict.
    pub(crate) fn spawn_radar(&self) {
        let engine = self.clone();
        let mut events = self.subscribe();
        let closing = self.closing();
        tokio::spawn(async move {
            tokio::pin!(closing);
            loop {
                let first = tokio::select! {
                    _ = &mut closing => return,
                    ev = events.recv() => ev,
                };
                match engine.radar_notes(first) {
                    None => return,
                    Some(false) => continue,
                    Some(true) => {}
                }
                // The events of one change come together: note them all, then look once.
                tokio::time::sleep(GATHER).await;
                loop {
                    let noted = match events.try_recv() {
                        Ok(ev) => engine.radar_notes(Ok(ev)),
                        Err(TryRecvError::Lagged(n)) => {
                            engine.radar_notes(Err(RecvError::Lagged(n)))
                        }
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Closed) => None,
                    };
                    if noted.is_none() {
                        return;
                    }
                }
                engine.radar_look(false).await;
            }
        });
    }

    /// Notes what an event means for the radar: `Some(true)` look again, `Some(false)` not,
    /// `None` the engine is gone.
    fn radar_notes(&self, ev: Result<Event, RecvError>) -> Option<bool> {
        match ev {
            Ok(ev) => {
                let Some(id) = task_to_read_again(self, &ev) else {
                    return Some(false);
                };
                self.radar().state.lock().stale.insert(id);
                Some(true)
            }
            Err(RecvError::Lagged(_)) => {
                // Missed events: every task's files may have changed.
                let mut st = self.radar().state.lock();
                let ids: Vec<String> = st.works.keys().cloned().collect();
                st.stale.extend(ids);
                Some(true)
            }
            Err(RecvError::Closed) => None,
        }
    }

    /// Looks at every live worktree task: reads again the tasks marked stale (and, when
    /// `running_too`, every task whose agent may still be writing), merges, and publishes
    /// each report that changed.
    pub(crate) async fn radar_look(&self, running_too: bool) {
        let _one = self.radar().looking.lock().await;
        let stale = std::mem::take(&mut self.radar().state.lock().stale);
        let mut groups: BTreeMap<(String, String), Vec<Live>> = BTreeMap::new();
        for task in self.tasks_oldest_first() {
            let Some(wt) = task.metadata.worktree.as_ref().filter(|w| w.is_live()) else {
                continue;
            };
            let read = stale.contains(&task.id) || (running_too && !task.status().is_final());
            groups
                .entry((wt.at.repo.clone(), wt.at.base_branch.clone()))
                .or_default()
                .push(Live {
                    id: task.id.clone(),
                    name: task.name.clone(),
                    at: wt.at.clone(),
                    read,
                });
        }
        let caches = {
            let mut st = self.radar().state.lock();
            RadarState {
                works: std::mem::take(&mut st.works),
                pairs: std::mem::take(&mut st.pairs),
                bases: std::mem::take(&mut st.bases),
                ..Default::default()
            }
        };
        let looked = tokio::task::spawn_blocking(move || {
            let mut used = RadarState::default();
            let results: Vec<GroupResult> = groups
                .iter()
                .map(|((repo, base), tasks)| {
                    look_at_group(Path::new(repo), base, tasks, &caches, &mut used)
                })
                .collect();
            (results, used)
        })
        .await;
        let (results, used) = match looked {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "the conflict radar's look failed");
                return;
            }
        };
        let checked_at = now_ms();
        let fresh: HashMap<String, ConflictReport> = results
            .iter()
            .flat_map(|g| g.reports(checked_at))
            .map(|r| (r.task_id.clone(), r))
            .collect();
        let mut changed = Vec::new();
        {
            let mut st = self.radar().state.lock();
            st.works = used.works;
            st.pairs = used.pairs;
            st.bases = used.bases;
            let gone: Vec<String> = st
                .reports
                .keys()
                .filter(|id| !fresh.contains_key(*id))
                .cloned()
                .collect();
            for id in gone {
                st.reports.remove(&id);
                st.merged_rivals.remove(&id);
                changed.push(Arc::new(self.report_without_worktree(&id)));
            }
            for (id, report) in fresh {
                let report = Arc::new(report);
                let same = st
                    .reports
                    .get(&id)
                    .is_some_and(|old| old.same_conflicts(&report));
                if !same {
                    changed.push(report.clone());
                }
                st.reports.insert(id, report);
            }
        }
        for report in changed {
            self.publish(Event::Conflicts { report });
        }
    }

    /// The report of a task with no live worktree: empty, with the reason.
    fn report_without_worktree(&self, id: &str) -> ConflictReport {
        let note = match self.live_worktree(id) {
            Err(EngineError::Conflict(why)) | Err(EngineError::NotFound(why)) => why,
            _ => "the task has no live worktree".into(),
        };
        ConflictReport {
            task_id: id.to_string(),
            note: Some(note),
            ..Default::default()
        }
    }

    /// `GET /tasks/:id/conflicts`: the task's conflicts as they are now (the radar looks
    /// again first: a base branch that moved is seen here).
    pub async fn task_conflicts(&self, id: &str) -> EngineResult<ConflictReport> {
        self.get_task(id)?;
        if self.live_worktree(id).is_err() {
            return Ok(self.report_without_worktree(id));
        }
        self.radar_look(true).await;
        let report = self.radar().state.lock().reports.get(id).cloned();
        Ok(report.map_or_else(|| self.report_without_worktree(id), |r| (*r).clone()))
    }

    /// `GET /conflicts`: every live worktree task's report, after a look.
    pub async fn all_conflicts(&self) -> Vec<ConflictReport> {
        self.radar_look(true).await;
        let st = self.radar().state.lock();
        self.tasks_oldest_first()
            .iter()
            .filter_map(|t| st.reports.get(&t.id).map(|r| (**r).clone()))
            .collect()
    }

    /// After `merged` was merged: the live tasks it conflicted with keep that, so that
    /// their own merge's refusal can name it.
    pub(crate) fn radar_note_merged(&self, merged: &Task) {
        let mut st = self.radar().state.lock();
        let Some(report) = st.reports.get(&merged.id).cloned() else {
            return;
        };
        for rival in &report.with_tasks {
            st.merged_rivals
                .entry(rival.task_id.clone())
                .or_default()
                .push(TaskConflict {
                    task_id: merged.id.clone(),
                    name: merged.name.clone(),
                    files: rival.files.clone(),
                });
        }
    }

    /// Why merging `id` conflicts in `files`, when the radar saw a task merged before it
    /// change them too: a sentence naming that task.
    pub(crate) fn radar_explain(&self, id: &str, files: &[String]) -> Option<String> {
        let st = self.radar().state.lock();
        let rivals: Vec<String> = st
            .merged_rivals
            .get(id)?
            .iter()
            .filter(|r| r.files.iter().any(|f| files.contains(f)))
            .map(|r| format!("{} ({})", r.name, r.task_id))
            .collect();
        (!rivals.is_empty()).then(|| {
            format!(
                "the merge conflicts in {}, which {} changed too and {} merged first; nothing was changed",
                files.join(", "),
                rivals.join(" and "),
                if rivals.len() == 1 { "was" } else { "were" },
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn merge_order_puts_the_quiet_first_and_the_base_conflicts_last() {
        let tasks = ids(&["a", "b", "c", "d"]);
        let pairs = vec![
            ("a".into(), "b".into(), ids(&["x"])),
            ("a".into(), "c".into(), ids(&["y"])),
        ];
        let mut base = HashMap::new();
        assert_eq!(
            merge_order(&tasks, &pairs, &base),
            ids(&["d", "b", "c", "a"])
        );
        base.insert("d".to_string(), ids(&["z"]));
        assert_eq!(
            merge_order(&tasks, &pairs, &base),
            ids(&["b", "c", "a", "d"])
        );
        assert_eq!(merge_order(&tasks, &[], &HashMap::new()), tasks);
    }
}
