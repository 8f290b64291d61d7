//! Typed arenas and handles, after naga's: IR nodes refer to each other by small indices,
//! so the IR is plain data that is cheap to build, clone and hash.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::num::NonZeroU32;

/// An index into an [`Arena<T>`]. `Option<Handle<T>>` is as small as a `Handle<T>`.
pub struct Handle<T> {
    index: NonZeroU32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    fn from_index(index: usize) -> Self {
        let value = u32::try_from(index + 1).expect("an arena holds fewer than 2^32 items");
        Handle {
            index: NonZeroU32::new(value).expect("index + 1 is never zero"),
            marker: PhantomData,
        }
    }

    /// The zero-based position of the item in its arena.
    pub fn index(self) -> usize {
        (self.index.get() - 1) as usize
    }

    /// A handle for position `index`, for validators and tests that build handles by hand.
    pub fn new(index: usize) -> Self {
        Self::from_index(index)
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index())
    }
}

/// A growable store of `T`s addressed by [`Handle<T>`].
#[derive(Clone, Debug)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `value` and returns its handle.
    pub fn append(&mut self, value: T) -> Handle<T> {
        self.items.push(value);
        Handle::from_index(self.items.len() - 1)
    }

    /// The item behind `handle`, or `None` if the handle is out of range.
    pub fn try_get(&self, handle: Handle<T>) -> Option<&T> {
        self.items.get(handle.index())
    }

    /// Whether `handle` points into this arena.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        handle.index() < self.items.len()
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Items with their handles, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, item)| (Handle::from_index(i), item))
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.items[handle.index()]
    }
}

/// An arena that stores each distinct value once, so equal types share a handle.
#[derive(Clone, Debug)]
pub struct UniqueArena<T: Eq + Hash + Clone> {
    arena: Arena<T>,
    lookup: std::collections::HashMap<T, Handle<T>>,
}

impl<T: Eq + Hash + Clone> Default for UniqueArena<T> {
    fn default() -> Self {
        UniqueArena {
            arena: Arena::new(),
            lookup: Default::default(),
        }
    }
}

impl<T: Eq + Hash + Clone> UniqueArena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// The handle of `value`, adding it if it is new.
    pub fn insert(&mut self, value: T) -> Handle<T> {
        if let Some(&handle) = self.lookup.get(&value) {
            return handle;
        }
        let handle = self.arena.append(value.clone());
        self.lookup.insert(value, handle);
        handle
    }

    /// The item behind `handle`, or `None` if out of range.
    pub fn try_get(&self, handle: Handle<T>) -> Option<&T> {
        self.arena.try_get(handle)
    }

    /// Items with their handles.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.arena.iter()
    }

    /// Number of distinct items.
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }
}

impl<T: Eq + Hash + Clone> std::ops::Index<Handle<T>> for UniqueArena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.arena[handle]
    }
}
