/**
 * Characters a model reads as an ASCII letter or angle bracket that neither NFKD nor
 * `confusables.txt` maps to one (`foldForScan` applies this table before the confusables
 * prototype, and again to what the prototype gives):
 *
 * - Latin small capitals, the "small caps" of fancy-text generators (`ɪɢɴᴏʀᴇ`, `ʏᴏᴜ ᴍᴜꜱᴛ`):
 *   NFKD leaves them as they are and `confusables.txt` maps only some (`ᴍ` even to `ʍ`). The
 *   modifier small capitals (`ᶦ`, `ᶫ`, `ᶰ`) decompose to these, so they follow;
 * - regional indicator symbols (`🇮🇬🇳🇴🇷🇪`) and negative circled and squared letters (`🅘`,
 *   `🅸`), which have no decomposition (the plain circled and squared ones decompose);
 * - angle brackets other than `<`/`>` that a model reads as a tag's (`〈…〉`, `⟨…⟩`, `《…》`,
 *   `⟪…⟫`, `❬…❭`): confusables maps `〈` and `⟨` only to `❬`. (Guillemets `«»` are left:
 *   they are quotation marks in French text. `‹›` already map to `<>`.)
 *
 * Written out (from the Unicode names `LATIN LETTER SMALL CAPITAL X`), so what is folded is
 * reviewable; `test/adapters/scan-folding.property.test.ts` respells markers with every entry.
 */
export const LETTER_FORMS: ReadonlyMap<string, string> = new Map([
  ...pairs('ᴀa ᴁae ᴃb ᴄc ᴅd ᴇe ᴊj ᴋk ĸk ᴌl ᴍm ᴏo ᴘp ᴛt ᴜu ᴠv ᴡw ᴢz'),
  ...pairs('ɢg ɪi ɴn ʀr ʏy ʙb ʛg ʜh ʟl ꜰf ꜱs ꞯq ᵻi ᵾu'),
  ...pairs('❬< ❭> ❰< ❱> 〈< 〉> ⟨< ⟩> 〈< 〉> 《< 》> ⟪< ⟫> ⦑< ⦒> ⧼< ⧽>'),
  ...letterRange(0x1f1e6), // regional indicator symbols A–Z
  ...letterRange(0x1f150), // negative circled capital letters A–Z
  ...letterRange(0x1f170), // negative squared capital letters A–Z
]);

// `'ᴀa ʙb'` → [['ᴀ', 'a'], ['ʙ', 'b']]: each entry one character, then what it folds to.
function pairs(entries: string): Array<[string, string]> {
  return entries.split(' ').map((entry) => {
    const [from, ...to] = [...entry];
    return [from!, to.join('')];
  });
}

// The 26 code points from `first`, read as `a`–`z`.
function letterRange(first: number): Array<[string, string]> {
  return Array.from({ length: 26 }, (_, index) => [
    String.fromCodePoint(first + index),
    String.fromCharCode(97 + index),
  ]);
}
