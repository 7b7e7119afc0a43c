// A typo inside a payload's type arguments is reported at the misspelt token itself, and
// rustc's suggestion replaces that token alone.

use std::collections::HashMap;

pipes::proto! {
    registry {
        Open: send { Register(HashMap<String, Strng>) -> ! }
    }
}

fn main() {}
