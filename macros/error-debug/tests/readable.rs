//! `{:?}` is the readable message with its causes; `{:#?}` is `#[derive(Debug)]`'s.

use cudajit_error_debug::ReadableDebug;

#[derive(thiserror::Error, ReadableDebug)]
#[error("libNVVM not found.\nSearched:\n  /usr/local/cuda")]
struct NotFound {
    searched: Vec<String>,
}

#[derive(thiserror::Error, ReadableDebug)]
enum Outer {
    /// The cause's text is part of the message: not repeated.
    #[error("kernel `{kernel}`: {source}")]
    Said { kernel: String, source: NotFound },
    /// The cause is not in the message: listed under "Caused by".
    #[error("kernel `{0}` could not be compiled")]
    Unsaid(String, #[source] NotFound),
    #[error("nothing to do")]
    Nothing,
}

/// The same shapes with the standard derive, for the structure.
#[allow(dead_code)]
#[derive(Debug)]
struct NotFoundMirror {
    searched: Vec<String>,
}

#[allow(dead_code)]
#[derive(Debug)]
enum OuterMirror {
    Said {
        kernel: String,
        source: NotFoundMirror,
    },
    Unsaid(String, NotFoundMirror),
    Nothing,
}

fn not_found() -> (NotFound, NotFoundMirror) {
    let searched = vec!["/usr/local/cuda".to_owned()];
    (
        NotFound {
            searched: searched.clone(),
        },
        NotFoundMirror { searched },
    )
}

#[test]
fn debug_is_the_message_and_the_causes_it_does_not_contain() {
    let (source, _) = not_found();
    let said = Outer::Said {
        kernel: "saxpy".into(),
        source,
    };
    assert_eq!(format!("{said:?}"), said.to_string());
    assert!(format!("{said:?}").contains("\nSearched:\n"));

    let (source, _) = not_found();
    let unsaid = Outer::Unsaid("saxpy".into(), source);
    assert_eq!(
        format!("{unsaid:?}"),
        "kernel `saxpy` could not be compiled\n\nCaused by:\n    libNVVM not found.\n    \
         Searched:\n      /usr/local/cuda"
    );
    assert_eq!(format!("{:?}", Outer::Nothing), "nothing to do");
}

#[test]
fn alternate_debug_is_the_derived_structure() {
    let (source, mirror) = not_found();
    let said = Outer::Said {
        kernel: "saxpy".into(),
        source,
    };
    let said_mirror = OuterMirror::Said {
        kernel: "saxpy".into(),
        source: mirror,
    };
    let mirrored = format!("{said_mirror:#?}").replace("NotFoundMirror", "NotFound");
    assert_eq!(
        format!("{said:#?}"),
        mirrored.replace("OuterMirror", "Outer")
    );
    let (source, mirror) = not_found();
    assert_eq!(
        format!("{:#?}", Outer::Unsaid("k".into(), source)),
        format!("{:#?}", OuterMirror::Unsaid("k".into(), mirror))
            .replace("NotFoundMirror", "NotFound")
    );
    assert_eq!(
        format!("{:#?}", Outer::Nothing),
        format!("{:#?}", OuterMirror::Nothing)
    );
    let (source, mirror) = not_found();
    assert_eq!(
        format!("{source:#?}"),
        format!("{mirror:#?}").replace("NotFoundMirror", "NotFound")
    );
}
