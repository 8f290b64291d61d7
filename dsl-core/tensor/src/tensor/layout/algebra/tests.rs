//! The worked examples of CuTe's layout documents (`01_layout.md`, `02_layout_algebra.md`),
//! and each operation checked against its definition by enumeration.

use super::{IntTuple, Layout};

fn layout(text: &str) -> Layout {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn t(text: &str) -> IntTuple {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn coordinates_map_as_in_cute() {
    let l = layout("((2,2),3):((1,4),2)");
    assert_eq!(l.size(), 12);
    // Colexicographic: the first mode fastest.
    let indices: Vec<i64> = (0..12).map(|k| l.call(k)).collect();
    assert_eq!(indices, [0, 1, 4, 5, 2, 3, 6, 7, 4, 5, 8, 9]);
    assert_eq!(l.index_of(&t("((1,1),2)")), 1 + 4 + 4);
    assert_eq!(l.index_of(&t("(3,2)")), l.call(3 + 4 * 2));
    assert_eq!(l.coordinate_of(7), t("((1,1),1)"));
    assert_eq!(l.cosize(), 10);
    assert_eq!(
        Layout::column_major(t("(2,(3,4))")).unwrap().to_string(),
        "(2,(3,4)):(1,(2,6))"
    );
}

#[test]
fn coalesce_as_in_cute() {
    assert_eq!(layout("(2,(1,6)):(1,(6,2))").coalesce().to_string(), "12:1");
    assert_eq!(layout("(4,2):(1,4)").coalesce().to_string(), "8:1");
    assert_eq!(layout("(4,2):(2,8)").coalesce().to_string(), "8:2");
    assert_eq!(layout("(4,2):(1,8)").coalesce().to_string(), "(4,2):(1,8)");
    assert_eq!(layout("(1,1):(3,5)").coalesce().to_string(), "1:0");
}

#[test]
fn composition_as_in_cute() {
    // 02_layout_algebra.md, "Composition" examples.
    let cases = [
        ("20:2", "(5,4):(4,1)", "(5,4):(8,2)"),
        ("(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))"),
        ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
        ("(12,(4,8)):(59,(13,1))", "(3,4):(4,12)", "(3,4):(236,13)"),
    ];
    for (a, b, want) in cases {
        let (a, b) = (layout(a), layout(b));
        let c = a.compose(&b).unwrap();
        assert_eq!(c.to_string(), want, "{a} ∘ {b}");
        for k in 0..b.size() {
            assert_eq!(c.call(k), a.call(b.call(k)), "{a} ∘ {b} at {k}");
        }
    }
}

#[test]
fn composition_refuses_what_does_not_divide() {
    let error = layout("(3,4):(1,5)").compose(&layout("2:2")).unwrap_err();
    assert!(error.to_string().contains("stride divisibility"), "{error}");
}

#[test]
fn complement_as_in_cute() {
    let cases = [
        ("4:1", 24, "6:4"),
        ("6:4", 24, "4:1"),
        ("(4,6):(1,4)", 24, "1:0"),
        ("4:2", 24, "(2,3):(1,8)"),
        ("(2,4):(1,6)", 24, "3:2"),
        ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ];
    for (a, bound, want) in cases {
        let a = layout(a);
        let c = a.complement(bound).unwrap();
        assert_eq!(c.to_string(), want, "complement({a}, {bound})");
        // (a, c) reaches every index below its cosize once.
        let both = Layout::concat(&[a.clone(), c]);
        let mut seen: Vec<i64> = (0..both.size()).map(|k| both.call(k)).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len() as i64,
            both.size(),
            "({a}, complement) is injective"
        );
    }
}

#[test]
fn divides_as_in_cute() {
    // 02_layout_algebra.md, "Logical Divide 1-D Example".
    let a = layout("(4,2,3):(2,1,8)");
    let b = layout("4:2");
    assert_eq!(
        a.logical_divide(&b).unwrap().to_string(),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
    // "Logical Divide 2-D Example": by mode, <3:3, (2,4):(1,8)>.
    let a = layout("(9,(4,8)):(59,(13,1))");
    let tilers = [layout("3:3"), layout("(2,4):(1,8)")];
    assert_eq!(
        a.logical_divide_by_mode(&tilers).unwrap().to_string(),
        "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))"
    );
    assert_eq!(
        a.zipped_divide(&tilers).unwrap().to_string(),
        "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    );
    assert_eq!(
        a.tiled_divide(&tilers).unwrap().to_string(),
        "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"
    );
    assert_eq!(
        a.flat_divide(&tilers).unwrap().to_string(),
        "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"
    );
}

#[test]
fn logical_product_as_in_cute() {
    // 02_layout_algebra.md, "Logical Product 1-D Example".
    let a = layout("(2,2):(4,1)");
    let b = layout("6:1");
    assert_eq!(
        a.logical_product(&b).unwrap().to_string(),
        "((2,2),(2,3)):((4,1),(2,8))"
    );
}

#[test]
fn a_divide_is_the_same_function_as_the_layout() {
    // Every element of the divided layout is the original's element at the same position.
    let a = layout("(8,(4,6)):(1,(8,32))");
    let tilers = [layout("4:1"), layout("(2,3):(1,4)")];
    let divided = a.logical_divide_by_mode(&tilers).unwrap();
    let mut of_a: Vec<i64> = (0..a.size()).map(|k| a.call(k)).collect();
    let mut of_divided: Vec<i64> = (0..divided.size()).map(|k| divided.call(k)).collect();
    of_a.sort_unstable();
    of_divided.sort_unstable();
    assert_eq!(of_a, of_divided);
}

#[test]
fn printing_and_parsing_round_trip() {
    for text in [
        "6:4",
        "(4,6):(1,4)",
        "((2,2),3):((24,2),8)",
        "(2,(3,(4,5))):(1,(2,(6,24)))",
    ] {
        assert_eq!(layout(text).to_string(), text);
    }
    assert!("(4,6):(1,(4,2))".parse::<Layout>().is_err());
    assert!("(4,6".parse::<IntTuple>().is_err());
    assert!("(4,0):(1,4)".parse::<Layout>().is_err());
    assert!(layout("4:1").complement(0).is_err());
}
